#include "purlin_elf_note.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace purlin::shim {
namespace {

constexpr char kOwner[] = "Purlin";
constexpr uint32_t kNoteType = 0x4e4c5250;  // "PRLN"

// The ELF note layout (namesz, descsz, type, name padded to 4, desc), which the
// assembler recognizes as SHT_NOTE by the ".note" section prefix and the linker
// gathers into a PT_NOTE segment.
struct alignas(4) PurlinNote {
  uint32_t namesz;
  uint32_t descsz;
  uint32_t type;
  char name[8];
  uint32_t desc;  // format version of this note
};
static_assert(sizeof(kOwner) <= 8);

// Exactly 4-aligned: the compiler would otherwise align a 24-byte object to 16, and the
// padding could end up inside a note segment shared with other 4-aligned notes.
[[gnu::used, gnu::section(".note.purlin"), gnu::aligned(4)]] constexpr PurlinNote kPurlinNote{
    sizeof(kOwner), sizeof(uint32_t), kNoteType, "Purlin", 1};

// Walks the notes of one PT_NOTE segment. `align` is the segment's alignment: 8-byte
// aligned segments (e.g. .note.gnu.property) pad name and desc to 8.
bool segment_has_purlin_note(const unsigned char* p, size_t size, size_t align) {
  auto pad = [align](size_t n) { return (n + align - 1) & ~(align - 1); };
  size_t off = 0;
  while (off + 12 <= size) {
    uint32_t namesz, descsz, type;
    std::memcpy(&namesz, p + off, 4);
    std::memcpy(&descsz, p + off + 4, 4);
    std::memcpy(&type, p + off + 8, 4);
    size_t name_off = off + 12;
    size_t next = name_off + pad(namesz) + pad(descsz);
    if (next > size || next <= off) return false;
    if (type == kNoteType && namesz == sizeof(kOwner) &&
        std::memcmp(p + name_off, kOwner, sizeof(kOwner)) == 0) {
      return true;
    }
    off = next;
  }
  return false;
}

bool read_exact(int fd, void* buf, size_t n, off_t at) {
  return pread(fd, buf, n, at) == static_cast<ssize_t>(n);
}

bool fd_has_purlin_note(int fd) {
  Elf64_Ehdr eh;
  if (!read_exact(fd, &eh, sizeof(eh), 0)) return false;
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr)) {
    return false;
  }
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  if (!read_exact(fd, ph.data(), ph.size() * sizeof(Elf64_Phdr), static_cast<off_t>(eh.e_phoff))) {
    return false;
  }
  // Note segments are small (build ids, ABI tags); a huge one is not ours to read.
  constexpr size_t kMaxNoteBytes = 1 << 20;
  std::vector<unsigned char> buf;
  for (const Elf64_Phdr& seg : ph) {
    if (seg.p_type != PT_NOTE || seg.p_filesz == 0 || seg.p_filesz > kMaxNoteBytes) continue;
    buf.resize(seg.p_filesz);
    if (!read_exact(fd, buf.data(), buf.size(), static_cast<off_t>(seg.p_offset))) continue;
    if (segment_has_purlin_note(buf.data(), buf.size(), seg.p_align == 8 ? 8 : 4)) return true;
  }
  return false;
}

}  // namespace

bool elf_file_has_purlin_note(const std::string& path) noexcept {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool found = false;
  try {
    found = fd_has_purlin_note(fd);
  } catch (...) {  // vector allocation; an unreadable candidate is simply not Purlin
  }
  close(fd);
  return found;
}

}  // namespace purlin::shim
