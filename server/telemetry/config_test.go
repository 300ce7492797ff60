package telemetry

import (
	"reflect"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config string
		env    map[string]string
		want   Settings
		err    string
	}{
		{name: "off", want: Settings{}},
		{name: "config base", config: "http://127.0.0.1:4318/",
			want: Settings{Endpoint: "http://127.0.0.1:4318/v1/traces", Source: "[telemetry] otlp_endpoint", Headers: map[string]string{}}},
		{name: "config wins", config: "https://c.example", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318"},
			want: Settings{Endpoint: "https://c.example/v1/traces", Source: "[telemetry] otlp_endpoint", Headers: map[string]string{}}},
		{name: "base variable", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/otlp"},
			want: Settings{Endpoint: "http://c:4318/otlp/v1/traces", Source: "OTEL_EXPORTER_OTLP_ENDPOINT", Headers: map[string]string{}}},
		{name: "traces variable as written", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:4318/custom"},
			want: Settings{Endpoint: "http://t:4318/custom", Source: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", Headers: map[string]string{}}},
		{name: "headers, traces ones win", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
			"OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%20b, x-team = one", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=two"},
			want: Settings{Endpoint: "http://c:4318/v1/traces", Source: "OTEL_EXPORTER_OTLP_ENDPOINT", Headers: map[string]string{"api-key": "a b", "x-team": "two"}}},
		{name: "sdk disabled", config: "http://c:4318", env: map[string]string{"OTEL_SDK_DISABLED": "true"}, want: Settings{}},
		{name: "exporter none", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, want: Settings{}},
		{name: "grpc refused", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: "OTLP/HTTP"},
		{name: "not http", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://c"}, err: "http:// or https://"},
		{name: "no host", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http:///v1/traces"}, err: "no host"},
		{name: "credentials in the URL", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://u:p@c:4318"}, err: "user or password"},
		{name: "bad headers", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, err: "key=value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.config, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParseHeaders(t *testing.T) {
	for in, want := range map[string]map[string]string{
		"":                         {},
		"a=1":                      {"a": "1"},
		" a = 1 ,b=x%3Dy,,":        {"a": "1", "b": "x=y"},
		"Authorization=Bearer%20t": {"Authorization": "Bearer t"},
	} {
		got, err := ParseHeaders(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseHeaders(%q) = %v %v", in, got, err)
		}
	}
	for _, in := range []string{"a", "=1", "a b=1", "a=%zz", "a=x%0Ay", "a:b=1"} {
		if _, err := ParseHeaders(in); err == nil {
			t.Errorf("ParseHeaders(%q) accepted", in)
		}
	}
}

// FuzzParseHeaders: what is accepted is only header names and values an
// HTTP request can carry as they are.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"a=1", "api-key=a%20b,x=y", "a=%0d%0aX-Evil:1", "k=v=w", ", ,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHeaders(s)
		if err != nil {
			return
		}
		for k, v := range h {
			if !isToken(k) || strings.ContainsAny(v, "\r\n\x00") {
				t.Fatalf("accepted %q: %q=%q", s, k, v)
			}
		}
	})
}
