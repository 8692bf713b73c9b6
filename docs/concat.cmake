# cmake -D OUTPUT=out -D INPUTS="a;b;c" -P concat.cmake: OUTPUT = a + b + c.
set(text "")
foreach(input ${INPUTS})
  file(READ ${input} part)
  string(APPEND text "${part}\n")
endforeach()
file(WRITE ${OUTPUT} "${text}")
