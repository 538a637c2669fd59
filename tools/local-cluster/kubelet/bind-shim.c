/*
 * Test-bed only: pods on the local kubelet share the host's network, but each node has its own loopback IP.
 * Preloaded into every container, this turns a bind to the wildcard address (0.0.0.0 or ::) with a fixed port
 * into a bind to the pod's IP ($CAIRN_POD_IP), so the same server can listen on the same port on every node,
 * as pods with their own network namespaces can. Binds to port 0 (ephemeral, outgoing) are left alone.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_fn)(int, const struct sockaddr *, socklen_t);

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
  static bind_fn real_bind;
  if (!real_bind) real_bind = (bind_fn)dlsym(RTLD_NEXT, "bind");
  const char *ip = getenv("CAIRN_POD_IP");
  struct in_addr pod;
  if (!ip || !addr || inet_pton(AF_INET, ip, &pod) != 1) return real_bind(fd, addr, len);
  if (addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
    struct sockaddr_in in4;
    memcpy(&in4, addr, sizeof in4);
    if (in4.sin_addr.s_addr == htonl(INADDR_ANY) && in4.sin_port != 0) {
      in4.sin_addr = pod;
      return real_bind(fd, (const struct sockaddr *)&in4, sizeof in4);
    }
  } else if (addr->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
    struct sockaddr_in6 in6;
    memcpy(&in6, addr, sizeof in6);
    if (memcmp(&in6.sin6_addr, &in6addr_any, sizeof in6addr_any) == 0 && in6.sin6_port != 0) {
      /* The IPv4-mapped form of the pod IP: a dual-stack socket then listens on that IPv4 address. */
      memset(&in6.sin6_addr, 0, sizeof in6.sin6_addr);
      in6.sin6_addr.s6_addr[10] = 0xff;
      in6.sin6_addr.s6_addr[11] = 0xff;
      memcpy(&in6.sin6_addr.s6_addr[12], &pod, 4);
      return real_bind(fd, (const struct sockaddr *)&in6, sizeof in6);
    }
  }
  return real_bind(fd, addr, len);
}
