// How the ranks of a communicator share one HDF5 file.
//
// Collective: every rank opens the file with the MPI-IO driver and transfers its hyperslab in
// one collective call. Needs a parallel HDF5 (H5_HAVE_PARALLEL).
// Serial: the ranks take turns in rank order — a token passed from rank r to r + 1 — and each
// opens the file with the default (sec2) driver, writes its part and closes it again before
// passing the token on. The file format is the same. A serial HDF5 library always works this
// way; a parallel one does when the environment says TESSERA_HDF5_IO=serial (for testing, and
// for file systems where MPI-IO misbehaves).
#pragma once

#include <mpi.h>

#include <functional>
#include <string>

#include "io/h5_file.hpp"

namespace tessera::io::detail {

enum class IoMode { Collective, Serial };

// The mode for a file opened now: TESSERA_HDF5_IO (serial | parallel | auto, default auto) and
// what the library supports, as decided by rank 0 (collective over comm, so ranks never mix
// modes). Throws InputError on every rank for an unknown value.
IoMode choose_io_mode(MPI_Comm comm);

// Runs `turn` on every rank, one rank at a time in rank order. A rank whose turn throws passes
// on a token saying so; the later ranks skip their turns; then all agree (mpi::agree), so every
// rank throws the error of the lowest failing rank.
void take_turns(MPI_Comm comm, const std::function<void()>& turn);

// Runs `step` on rank 0 only; every rank throws if it failed.
void on_root(MPI_Comm comm, const std::function<void()>& step);

// Opens `path` with the default (sec2) driver, on this rank alone; IoError naming the file.
unique_hid open_file_alone(const std::string& path, bool write);

// A collective raw-data transfer: `fn` runs on every rank (an H5Dread / H5Dwrite in
// H5FD_MPIO_COLLECTIVE mode) and every rank throws if it failed on one. A rank whose transfer
// failed may have left the others inside the collective call, where they would wait forever:
// it waits TESSERA_COLLECTIVE_TIMEOUT seconds (default 60) for them to agree, then removes
// f's temporary and aborts the job with its message. Writers call f.reserve_space() first, so
// that a full disk is found before the transfer.
void collective_transfer(const H5File& f, const std::function<void()>& fn);

// Metadata changes (create a dataset, write an attribute) on f's root file id. Collective mode:
// every rank calls fn(f.id()) — HDF5 wants identical metadata calls on all ranks. Serial mode:
// rank 0 opens the file for writing, calls fn, closes it. Either way every rank throws if one
// failed.
void change_metadata(H5File& f, const std::function<void(hid_t file)>& fn);
// Metadata reads that every rank needs: every rank calls fn with f.id() (collective mode) or
// with the file opened read-only for the call (serial mode: reads need no turns, nobody writes
// at the same time); every rank throws if one failed.
void read_metadata(const H5File& f, const std::function<void(hid_t file)>& fn);

} // namespace tessera::io::detail
