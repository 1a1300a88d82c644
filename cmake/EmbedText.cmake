# cmake -DIN=file -DOUT=file.cpp -P EmbedText.cmake: a text file as a C++ string constant.
file(READ ${IN} _text HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_text}")
file(WRITE ${OUT} "// Generated from ${IN}; do not edit.\n#include <string_view>\n"
  "namespace tessera::app {\nstatic const char kDefaultDeckBytes[] = {${_bytes} 0};\n"
  "std::string_view embedded_default_deck() {\n"
  "  return {kDefaultDeckBytes, sizeof(kDefaultDeckBytes) - 1};\n}\n}  // namespace tessera::app\n")
