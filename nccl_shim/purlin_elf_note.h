// Telling a Purlin build from a real NCCL without loading it.
//
// Both are files named libnccl.so.2 exporting the same symbols. Every binary that links
// this code (Purlin's libnccl.so.2 among them) carries an ELF note owned by "Purlin";
// the loader reads a candidate's note segments and refuses it when the note is there,
// so a second copy of Purlin (another build directory on LD_LIBRARY_PATH, an installed
// copy) is never taken for the real NCCL and never even loaded.
#pragma once

#include <string>

namespace purlin::shim {

// True when `path` is a 64-bit ELF file whose PT_NOTE segments hold Purlin's note.
// False for anything else, unreadable files included. Never throws.
bool elf_file_has_purlin_note(const std::string& path) noexcept;

}  // namespace purlin::shim
