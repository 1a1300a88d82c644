// Byte sizes on the command line: "2GiB", "512MiB", "1.5GB", "4096". Decimal units (kB, MB, GB,
// TB; also k, M, G, T) are powers of 1000, binary ones (KiB, MiB, GiB, TiB) powers of 1024.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/format_bytes.hpp"

namespace tessera::app {

// Throws InputError naming `what` (the option) and the accepted forms.
std::size_t parse_byte_size(std::string_view text, std::string_view what);
// "1.50 GiB", "512.00 MiB", "100 B" (core/format_bytes.hpp).
using tessera::format_bytes;

} // namespace tessera::app
