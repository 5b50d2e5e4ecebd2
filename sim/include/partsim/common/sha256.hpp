// SHA-256 (FIPS 180-4) of a text: what identifies an input file's content, e.g. a sweep's scenario across shards.
#pragma once

#include <string>
#include <string_view>

namespace partsim {

/** The SHA-256 digest of `data` as 64 lowercase hexadecimal digits (what `sha256sum` prints). */
std::string sha256_hex(std::string_view data);

} // namespace partsim
