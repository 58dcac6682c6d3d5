#include "core/sha256.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/regular_file.h"

namespace maskprior {
namespace {

constexpr uint64_t kPieceBytes = uint64_t{4} << 20;

struct DigestContext {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context{EVP_MD_CTX_new(),
                                                                  &EVP_MD_CTX_free};
  DigestContext() {
    internal_check(
        context != nullptr && EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) == 1,
        "SHA-256 failed to start");
  }
  void update(const void* data, size_t size) {
    internal_check(EVP_DigestUpdate(context.get(), data, size) == 1, "SHA-256 failed");
  }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    internal_check(EVP_DigestFinal_ex(context.get(), digest, &length) == 1, "SHA-256 failed");
    std::string text;
    for (unsigned int i = 0; i < length; ++i) text += fmt::format("{:02x}", digest[i]);
    return text;
  }
};

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  DigestContext digest;
  digest.update(bytes.data(), bytes.size());
  return digest.hex();
}

std::string sha256_file(const std::string& path, uint64_t max_bytes, std::string_view what) {
  const RegularFile file(path, what);
  if (file.size() > max_bytes) {
    file.fail(fmt::format("it is {} bytes, over the limit of {}", file.size(),
                          byte_size_text(max_bytes)));
  }
  DigestContext digest;
  std::vector<char> piece(static_cast<size_t>(std::min(file.size(), kPieceBytes)));
  for (uint64_t offset = 0; offset < file.size(); offset += piece.size()) {
    check_stop_requested(fmt::format("hashing {} '{}'", what, path));
    const uint64_t count = std::min<uint64_t>(piece.size(), file.size() - offset);
    file.read_at(offset, piece.data(), count);
    digest.update(piece.data(), static_cast<size_t>(count));
  }
  return digest.hex();
}

}  // namespace maskprior
