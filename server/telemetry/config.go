package telemetry

import (
	"fmt"
	"net/url"
	"strings"
)

// Settings say where traces go; the zero value (no Endpoint) is off.
type Settings struct {
	// Endpoint is the full URL spans are POSTed to (…/v1/traces).
	Endpoint string
	// Headers are added to every export (from OTEL_EXPORTER_OTLP_HEADERS
	// and OTEL_EXPORTER_OTLP_TRACES_HEADERS, the latter winning).
	Headers map[string]string
	// Source names where Endpoint came from, for the start-up line.
	Source string
}

// Resolve reads the settings from the config's [telemetry] otlp_endpoint
// and the standard OTLP exporter variables (getenv is os.Getenv). The
// config wins over the environment; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
// used as written, a base URL (the config's, OTEL_EXPORTER_OTLP_ENDPOINT)
// gets /v1/traces appended, as the OTLP exporter specification says.
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn traces off.
// Only OTLP/HTTP is spoken: a grpc protocol setting is an error rather
// than spans sent to a port that cannot read them.
func Resolve(configEndpoint string, getenv func(string) string) (Settings, error) {
	var s Settings
	switch {
	case configEndpoint != "":
		s.Endpoint, s.Source = withTracesPath(configEndpoint), "[telemetry] otlp_endpoint"
	case getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		s.Endpoint, s.Source = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	case getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		s.Endpoint, s.Source = withTracesPath(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")), "OTEL_EXPORTER_OTLP_ENDPOINT"
	default:
		return Settings{}, nil
	}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return Settings{}, nil
	}
	if err := checkEndpoint(s.Endpoint); err != nil {
		return Settings{}, fmt.Errorf("telemetry: %s: %w", s.Source, err)
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		switch p := getenv(v); p {
		case "", "http/json", "http/protobuf":
		default:
			return Settings{}, fmt.Errorf("telemetry: %s=%q: onellm-mcp exports OTLP/HTTP (JSON) only; unset it and name the collector's HTTP port (4318)", v, p)
		}
	}
	s.Headers = map[string]string{}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		h, err := ParseHeaders(getenv(v))
		if err != nil {
			return Settings{}, fmt.Errorf("telemetry: %s: %w", v, err)
		}
		for k, val := range h {
			s.Headers[k] = val
		}
	}
	return s, nil
}

// withTracesPath appends the traces path to a base URL.
func withTracesPath(base string) string {
	return strings.TrimRight(base, "/") + "/v1/traces"
}

// checkEndpoint accepts an http or https URL naming a host, without
// credentials (they would be printed at start-up; headers carry keys).
func checkEndpoint(e string) error {
	u, err := url.Parse(e)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %v", e, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: the collector URL must be http:// or https://", e)
	case u.Host == "":
		return fmt.Errorf("%q: the collector URL names no host", e)
	case u.User != nil:
		return fmt.Errorf("the collector URL must not carry a user or password; put credentials in OTEL_EXPORTER_OTLP_HEADERS")
	}
	return nil
}

// ParseHeaders reads the OTEL_EXPORTER_OTLP_HEADERS format: comma-separated
// key=value pairs, values percent-encoded (the W3C Baggage syntax the OTLP
// exporter specification names). A pair without "=", an empty or
// non-token key, or a value holding a control character after decoding is
// an error: a header is sent as written or not at all.
func ParseHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || !isToken(k) {
			return nil, fmt.Errorf("want key=value pairs separated by commas, with a header name as the key")
		}
		dv, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("header %s: the value is not percent-encoded correctly", k)
		}
		if strings.ContainsFunc(dv, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
			return nil, fmt.Errorf("header %s: the value holds a control character", k)
		}
		out[k] = dv
	}
	return out, nil
}

// isToken reports whether s is an HTTP header name (RFC 9110 token).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}
