#include "metrics/http_exporter.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace backfill {
namespace {

void InitCivetwebOnce() {
  // mg_init_library is not thread-safe; a function-local static is.
  static const bool initialized = [] {
    mg_init_library(0);
    return true;
  }();
  (void)initialized;
}

// Whether binding `address`:`port` fails because it is taken (IPv4 only;
// false if the address is not IPv4 or the probe fails for another reason).
bool PortInUse(const std::string& address, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) return false;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const bool in_use =
      bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 &&
      errno == EADDRINUSE;
  close(fd);
  return in_use;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpExporter>> HttpExporter::Start(
    Registry& registry, const Options& options) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("port out of range 0..65535: ", options.port));
  }
  if (options.num_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_threads must be >= 1: ", options.num_threads));
  }
  // civetweb's listening_ports is a comma-separated list with its own
  // suffixes ("s", "r"); only plain address characters may reach it.
  if (options.bind_address.empty() ||
      options.bind_address.find_first_not_of("0123456789abcdefABCDEF.:") !=
          std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("bind_address must be an IPv4 or IPv6 literal: \"",
                     options.bind_address, "\""));
  }
  InitCivetwebOnce();

  const bool ipv6 = absl::StrContains(options.bind_address, ':');
  const std::string listening_ports =
      ipv6 ? absl::StrCat("[", options.bind_address, "]:", options.port)
           : absl::StrCat(options.bind_address, ":", options.port);
  const std::string num_threads = absl::StrCat(options.num_threads);
  const char* configuration[] = {"listening_ports",
                                 listening_ports.c_str(),
                                 "num_threads",
                                 num_threads.c_str(),
                                 "enable_keep_alive",
                                 "no",
                                 "request_timeout_ms",
                                 "10000",
                                 nullptr};

  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof(callbacks));
  // Errors reach the caller as a Status; keep civetweb off stderr.
  callbacks.log_message = [](const mg_connection*, const char*) { return 1; };

  auto exporter = std::unique_ptr<HttpExporter>(new HttpExporter(registry));
  mg_init_data init;
  init.callbacks = &callbacks;
  init.user_data = exporter.get();
  init.configuration_options = configuration;
  char error_text[256] = "";
  unsigned error_code = 0;
  mg_error_data error;
  error.code = &error_code;
  error.text = error_text;
  error.text_buffer_size = sizeof(error_text);
  exporter->context_ = mg_start2(&init, &error);
  if (exporter->context_ == nullptr) {
    // civetweb's text ("Failed to setup server ports") does not say why;
    // the usual reason is a port another process holds.
    const bool in_use =
        options.port != 0 && PortInUse(options.bind_address, options.port);
    return absl::UnavailableError(absl::StrCat(
        "cannot start the metrics HTTP server on ", listening_ports, ": ",
        in_use
            ? "the port is in use (another process listens there; choose "
              "another port, or 0 for any free one)"
            : absl::StrCat(error_text, " (civetweb error ", error_code, ")")));
  }
  mg_set_request_handler(exporter->context_, "/metrics$",
                         &HttpExporter::HandleMetrics, exporter.get());
  mg_server_port ports[1];
  if (mg_get_server_ports(exporter->context_, 1, ports) != 1) {
    return absl::UnavailableError(absl::StrCat(
        "the metrics HTTP server on ", listening_ports, " reports no port"));
  }
  exporter->port_ = ports[0].port;
  return exporter;
}

HttpExporter::~HttpExporter() {
  if (context_ != nullptr) mg_stop(context_);
}

int HttpExporter::HandleMetrics(mg_connection* connection, void* exporter) {
  const mg_request_info* request = mg_get_request_info(connection);
  const bool head = std::strcmp(request->request_method, "HEAD") == 0;
  if (!head && std::strcmp(request->request_method, "GET") != 0) {
    mg_send_http_error(connection, 405, "Only GET and HEAD are allowed.\n");
    return 405;
  }
  const std::string body =
      static_cast<HttpExporter*>(exporter)->registry_.ExportText();
  mg_send_http_ok(connection, std::string(kPrometheusTextContentType).c_str(),
                  static_cast<long long>(body.size()));
  if (!head) mg_write(connection, body.data(), body.size());
  return 200;
}

}  // namespace backfill
