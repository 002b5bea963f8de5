// For the seed-corpus generators (each package's fuzz_corpus_generator):
// writes one corpus file, creating its directory.
//
//   WriteCorpusFile(root / "memcmp_codec_fuzz", "int64_asc", bytes);
#ifndef THIRD_PARTY_FUZZING_CORPUS_FILE_H_
#define THIRD_PARTY_FUZZING_CORPUS_FILE_H_

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/string_view.h"

namespace backfill {

// Writes `bytes` to dir/name. A generator that cannot write its corpus has
// nothing else to do: on failure it prints the path and exits 1.
inline void WriteCorpusFile(const std::filesystem::path& dir,
                            const std::string& name, absl::string_view bytes) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  const std::filesystem::path path = dir / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (error || !out) {
    std::fprintf(stderr, "cannot write corpus file %s%s%s\n", path.c_str(),
                 error ? ": " : "", error ? error.message().c_str() : "");
    std::exit(1);
  }
}

}  // namespace backfill

#endif  // THIRD_PARTY_FUZZING_CORPUS_FILE_H_
