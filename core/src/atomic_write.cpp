// The one way einfuzz writes a file: temporary file, write, fsync, check, rename.
#include "einfuzz/core/atomic_write.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace einfuzz {

std::string write_file_atomically(const std::string& path, std::string_view text, bool no_replace) {
  const auto why = [&](const char* what) { return std::string(what) + " '" + path + "': " + std::strerror(errno); };
  if (path.empty()) return "an empty file name";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (no_replace) return "'" + path + "' exists";
    // A device (/dev/null, /dev/full, a terminal) or a FIFO cannot be replaced by a rename: write
    // it in place, and still report every failed write and close.
    if (!S_ISREG(st.st_mode)) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) return why("cannot open");
      for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          const std::string e = why("cannot write");
          ::close(fd);
          return e;
        }
        done += static_cast<std::size_t>(n);
      }
      if (::close(fd) != 0) return why("cannot close");
      return {};
    }
  }
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return why("cannot create a temporary file next to");
  const auto fail = [&](const char* what) {
    std::string e = std::string(what) + " '" + tmp + "': " + std::strerror(errno);
    ::close(fd);
    ::unlink(tmp.c_str());
    return e;
  };
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("cannot write");
    if (n == 0) {
      errno = ENOSPC;
      return fail("cannot write");
    }
    done += static_cast<std::size_t>(n);
  }
  // mkstemp makes it 0600; a report or a case is as readable as any file the user creates.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::fsync(fd) != 0) return fail("cannot flush");
  struct stat written {};
  if (::fstat(fd, &written) != 0 || written.st_size != static_cast<off_t>(text.size())) {
    errno = EIO;
    return fail("short file");
  }
  if (::close(fd) != 0) {
    std::string e = "cannot close '" + tmp + "': " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return e;
  }
  // link() fails when the name exists, rename() replaces it atomically.
  const int rc = no_replace ? ::link(tmp.c_str(), path.c_str()) : ::rename(tmp.c_str(), path.c_str());
  if (rc != 0) {
    std::string e = (no_replace && errno == EEXIST) ? "'" + path + "' exists" : why("cannot rename the temporary file to");
    ::unlink(tmp.c_str());
    return e;
  }
  if (no_replace) ::unlink(tmp.c_str());
  return {};
}

}  // namespace einfuzz
