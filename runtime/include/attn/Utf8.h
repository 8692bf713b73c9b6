// Well-formed UTF-8: what spec values, data files and checkpoint metadata must be.
#ifndef ATTN_UTF8_H
#define ATTN_UTF8_H

#include <string_view>

namespace attn {

/// The offset of the first byte of `text` that is not part of a well-formed UTF-8 sequence
/// (a stray continuation byte, a truncated sequence, an overlong form, a surrogate, a code
/// point past U+10FFFF), or npos when there is none.
size_t invalidUtf8(std::string_view text);

} // namespace attn

#endif // ATTN_UTF8_H
