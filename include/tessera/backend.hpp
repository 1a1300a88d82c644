// Where kernels run and where data lives.
#pragma once

#include <string_view>

#include <tessera/export.h>

namespace tessera {

// Auto: CUDA when the build has it and a GPU is usable, else the OpenMP CPU backend.
enum class Backend { Auto, Cpu, Cuda };
// Where a plan's execute() pointers live (the CUDA backend takes either).
enum class Memory { Host, Device };

TESSERA_API std::string_view backend_name(Backend b) noexcept;
// "auto", "cpu", "cuda"; throws InputError otherwise.
TESSERA_API Backend parse_backend(std::string_view s);

} // namespace tessera
