// Byte counts for people: "100 B", "1.50 GiB", "512.00 MiB" (binary units, up to PiB).
#pragma once

#include <string>

namespace tessera {

std::string format_bytes(double bytes);

} // namespace tessera
