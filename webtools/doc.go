// Package webtools is the HTTP engine behind the http_request tool: a fetch
// loop that decides every hop, a dialer that connects only to addresses it
// has checked, response limits, and brokered secrets.
//
// A call goes hop by hop (the first request, then each redirect followed,
// at most Options.MaxHops requests in all). For each hop Do
//
//  1. parses the URL (http or https, no userinfo) and normalises the host:
//     lower case, no trailing dot, and IP literals read the way a resolver
//     reads them (2130706433, 0x7f.1, 127.1, 0177.0.0.1, [::ffff:127.0.0.1]);
//     a name that ends in a number but is no valid address is refused;
//  2. resolves a name once, with the configured resolver;
//  3. classifies every address (netaddr.Classify) and calls Decide with the hop,
//     its addresses, whether any is non-public, and the secrets that would
//     be attached;
//  4. refuses the hop if Decide does, or if any address is non-public and
//     Decide did not report allow_private;
//  5. connects on a fresh transport whose dialer dials only those addresses
//     (never the name, so a second DNS answer cannot change the target), and
//     whose socket control hook refuses any other address; TLS verifies the
//     original host name;
//  6. on 301/302/303/307/308 with a Location, closes the response and starts
//     the next hop; otherwise reads the body through a cap.
//
// Redirects are followed here, not by net/http: 301/302/303 become GET
// without a body (HEAD stays HEAD), 307/308 keep method and body, a relative
// Location is resolved against the current URL, and a non-http(s) Location is
// refused. The model's Authorization, Cookie and Proxy-Authorization headers
// are dropped for good once a redirect leaves the first host. There is no
// cookie jar.
//
// Secrets are attached per hop, recomputed each time: a secret goes only to a
// host its Hosts list names, only over https (or plain http to a loopback-only
// host, a local service), and it overrides a header of the same name that the
// model set. A hop whose URL contains a secret's value is refused. Every
// configured value, and its base64 and URL-escaped forms, is replaced by
// "[REDACTED:NAME]" in the returned headers, body (text after charset
// decoding; binary before base64), final URL and error texts. The body is
// redacted before it is cut to MaxBytes (it is read past the cap by the
// longest redacted form), so the cap cannot split a value into a prefix
// that escapes redaction. A body holding a NUL byte is binary whatever its
// declared type, and comes back base64.
//
// Limits: the timeout covers the network time of the whole call (resolving,
// connecting, sending and reading, over all hops); time spent in Decide,
// where a person may be answering an approval, is not counted. The body is
// read through a cap of MaxBytes on its decompressed size (gzip and deflate
// are requested and decoded here, so a compression bomb stops at the cap),
// and the response header size is bounded.
//
// # Security model
//
// What the guard stops: requests to loopback, RFC 1918, link-local, CGNAT,
// unique-local, site-local, multicast, unspecified, reserved, documentation
// and benchmarking addresses and to cloud metadata endpoints, whether named
// directly, in odd IPv4 spellings, in IPv4-mapped, IPv4-compatible, NAT64,
// 6to4 or Teredo IPv6 forms, or through a DNS name that resolves to them;
// DNS rebinding between the check and the connection (one lookup, the
// connection pinned to its answers); redirects that hop from an allowed host
// to a forbidden one (every hop is decided and guarded like the first);
// secrets leaking to hosts they were not configured for, through redirects,
// or back to the model in the response; memory exhaustion by large or
// highly compressed bodies; environment proxies (HTTP_PROXY and friends are
// ignored).
//
// What it cannot stop: a public host that itself forwards requests into a
// private network (an open proxy, a URL-fetching service, a misconfigured
// reverse proxy, a public DNS name that the operator's own network routes
// internally); a server the policy allowed that misuses a secret it was sent;
// a secret echoed back in a form other than the whole value or its base64 and
// URL-escaped forms (split, hashed, reversed, or in a different alignment of
// a larger base64 text); data the model puts in an allowed request's URL or
// body (exfiltration to an allowed host is the policy's business); and
// time-of-check changes outside DNS, such as a routing change. Host names
// are ASCII only: an internationalised name must be given in its punycode
// (xn--) form, since the standard library has no IDNA mapping.
package webtools
