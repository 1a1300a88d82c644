// Where kernels run and where data lives.
#pragma once

#include <string_view>

namespace tessera {

enum class Backend { Auto, Cpu, Cuda };
enum class Memory { Host, Device };

std::string_view backend_name(Backend b) noexcept;
// "auto", "cpu", "cuda"; throws InputError otherwise.
Backend parse_backend(std::string_view s);

} // namespace tessera
