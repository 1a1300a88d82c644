// A scan of a deck's TOML text before toml++ parses it. toml++ builds nested tables by recursion,
// so a header such as [a.a.a.…] with tens of thousands of parts overflows the stack; the scan
// measures how deep keys, tables, arrays and inline tables nest and refuses too deep a deck with
// a message naming the file and line. It is no TOML parser: on text it does not understand it
// stops and leaves the error to toml++ (which stops at the first error, before any deeper text).
#pragma once

#include <string>
#include <string_view>

namespace tessera::app {

// Throws InputError "SOURCE:LINE: …" when anything nests more than `limit` levels deep: the parts
// of a table header ([a.b.c] is 3) plus those of a dotted key below it, plus one per enclosing
// array or inline table.
void check_nesting(std::string_view text, const std::string& source, int limit);

} // namespace tessera::app
