#include "metrics/http_exporter.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/registry.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

struct HttpResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

// A minimal HTTP/1.0 client over a plain POSIX socket.
absl::StatusOr<HttpResponse> Fetch(int port, absl::string_view method,
                                   absl::string_view path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) !=
      0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("connect to port ", port));
  }
  const std::string request =
      absl::StrCat(method, " ", path, " HTTP/1.0\r\nHost: localhost\r\n\r\n");
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, 0);
    if (n <= 0) {
      close(fd);
      return absl::InternalError("send");
    }
    sent += static_cast<size_t>(n);
  }
  std::string raw;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) raw.append(buffer, n);
  close(fd);

  const size_t header_end = raw.find("\r\n\r\n");
  if (header_end == std::string::npos) {
    return absl::DataLossError(absl::StrCat("no header end in: ", raw));
  }
  HttpResponse response;
  response.body = raw.substr(header_end + 4);
  std::vector<absl::string_view> lines =
      absl::StrSplit(absl::string_view(raw).substr(0, header_end), "\r\n");
  std::vector<absl::string_view> status_line =
      absl::StrSplit(lines[0], absl::MaxSplits(' ', 2));
  if (status_line.size() < 2 ||
      !absl::SimpleAtoi(status_line[1], &response.status)) {
    return absl::DataLossError(absl::StrCat("bad status line: ", lines[0]));
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    std::pair<absl::string_view, absl::string_view> header =
        absl::StrSplit(lines[i], absl::MaxSplits(':', 1));
    if (absl::AsciiStrToLower(header.first) == "content-type") {
      response.content_type =
          std::string(absl::StripAsciiWhitespace(header.second));
    }
  }
  return response;
}

class HttpExporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CounterFamily* family =
        *registry_.AddCounterFamily("scrapes_total", "Scrapes.", {"path"});
    counter_ = *family->WithLabels({"/metrics"});
    counter_.Increment(3);
  }

  Registry registry_;
  Counter counter_;
};

TEST_F(HttpExporterTest, ServesMetricsOnAnOsChosenPort) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<HttpExporter> exporter,
                                HttpExporter::Start(registry_, {}));
  ASSERT_GT(exporter->port(), 0);
  BACKFILL_ASSERT_OK_AND_ASSIGN(HttpResponse response,
                                Fetch(exporter->port(), "GET", "/metrics"));
  EXPECT_EQ(response.status, 200);
  EXPECT_THAT(response.content_type, HasSubstr("text/plain; version=0.0.4"));
  EXPECT_EQ(response.body, registry_.ExportText());
  EXPECT_THAT(response.body, HasSubstr("scrapes_total{path=\"/metrics\"} 3\n"));

  counter_.Increment();  // Each scrape renders the current values.
  BACKFILL_ASSERT_OK_AND_ASSIGN(response,
                                Fetch(exporter->port(), "GET", "/metrics"));
  EXPECT_THAT(response.body, HasSubstr("scrapes_total{path=\"/metrics\"} 4\n"));
}

TEST_F(HttpExporterTest, HeadHasNoBody) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<HttpExporter> exporter,
                                HttpExporter::Start(registry_, {}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(HttpResponse response,
                                Fetch(exporter->port(), "HEAD", "/metrics"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, "");
}

TEST_F(HttpExporterTest, OtherPathsAndMethodsAreRefused) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<HttpExporter> exporter,
                                HttpExporter::Start(registry_, {}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(HttpResponse not_found,
                                Fetch(exporter->port(), "GET", "/other"));
  EXPECT_EQ(not_found.status, 404);
  BACKFILL_ASSERT_OK_AND_ASSIGN(HttpResponse sub_path,
                                Fetch(exporter->port(), "GET", "/metrics/x"));
  EXPECT_EQ(sub_path.status, 404);
  BACKFILL_ASSERT_OK_AND_ASSIGN(HttpResponse post,
                                Fetch(exporter->port(), "POST", "/metrics"));
  EXPECT_EQ(post.status, 405);
}

TEST_F(HttpExporterTest, ConcurrentScrapes) {
  // Four clients at once against the default single worker (see
  // Options::num_threads): requests queue and all succeed.
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<HttpExporter> exporter,
                                HttpExporter::Start(registry_, {}));
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 10; ++j) {
        counter_.Increment();
        absl::StatusOr<HttpResponse> response =
            Fetch(exporter->port(), "GET", "/metrics");
        ASSERT_THAT(response, IsOk());
        EXPECT_EQ(response->status, 200);
        EXPECT_THAT(response->body, HasSubstr("scrapes_total"));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter_.value(), 43u);
}

TEST_F(HttpExporterTest, PortInUseIsUnavailable) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<HttpExporter> first,
                                HttpExporter::Start(registry_, {}));
  EXPECT_THAT(
      HttpExporter::Start(registry_, {.port = first->port()}),
      StatusIs(absl::StatusCode::kUnavailable,
               HasSubstr(absl::StrCat(first->port(), ": the port is in use"))));
}

TEST_F(HttpExporterTest, BadOptionsAreInvalidArgument) {
  EXPECT_THAT(HttpExporter::Start(registry_, {.port = 70000}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(HttpExporter::Start(registry_, {.port = -1}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(HttpExporter::Start(registry_, {.num_threads = 0}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(HttpExporter::Start(registry_, {.bind_address = "1.2.3.4,5s"}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace backfill
