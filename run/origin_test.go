package run

import "testing"

// sameOrigin is RFC 6454's: scheme, host and port, a default port said or
// not; a host's two names are two origins.
func TestSameOrigin(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"http://127.0.0.1:8080/metrics", "http://127.0.0.1:8080/v1", true},
		{"http://Engine:80/metrics", "http://engine/v1", true},
		{"https://engine/metrics", "https://engine:443/v1", true},
		{"http://engine:8081/metrics", "http://engine:8080/v1", false},
		{"https://engine/metrics", "http://engine/v1", false},
		{"http://localhost:8080/metrics", "http://127.0.0.1:8080/v1", false},
		{"http://exporter.example:9400/metrics", "http://engine:8080/v1", false},
		{"/metrics", "http://engine/v1", false},
		{"http://[::1]:8080/metrics", "http://[::1]:8080/v1", true},
	} {
		if got := sameOrigin(tt.a, tt.b); got != tt.want {
			t.Errorf("sameOrigin(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
