// Strict parsing of numbers written as text (checkpoint metadata, command-line flags): the
// whole text must be the number, in range and finite, or a std::invalid_argument says what
// was expected ("'target_length' must be an integer from 2 to 8192, got '0'"). std::stoll and
// friends accept "2.5" as 2 and wrap "-1" for unsigned, and throw messages that say "stoll".
#pragma once

#include <cstdint>
#include <string>

namespace attn {

// An integer in [min, max]; `what` names it in the message.
int64_t parseInt(const std::string &text, int64_t min, int64_t max, const std::string &what);

// An unsigned 64-bit integer (no sign).
uint64_t parseUnsigned(const std::string &text, const std::string &what);

// A finite number in [min, max] (written as by "%.17g", so that printing and parsing round-trip
// exactly; "nan" and "inf" are refused).
double parseFinite(const std::string &text, double min, double max, const std::string &what);

// `value` as text that parseFinite reads back to the same double, bit for bit.
std::string exactText(double value);

} // namespace attn
