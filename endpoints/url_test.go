package endpoints

import "testing"

func TestURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ base, path, url, root string }{
		{"http://h:8000/v1", "/chat/completions", "http://h:8000/v1/chat/completions", "http://h:8000"},
		{"http://h:8000/v1/", "/models", "http://h:8000/v1/models", "http://h:8000"},
		{"https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21", "/chat/completions",
			"https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21", "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21"},
		{"http://h/v1/?a=1&b=two#frag", "/models", "http://h/v1/models?a=1&b=two", "http://h?a=1&b=two"},
		{"http://h/v1", "", "http://h/v1", "http://h"},
		{"::not a url", "/models", "::not a url/models", "::not a url"},
	} {
		if got := URL(tc.base, tc.path); got != tc.url {
			t.Errorf("URL(%q, %q) = %q, want %q", tc.base, tc.path, got, tc.url)
		}
		if got := ServerRoot(tc.base); got != tc.root {
			t.Errorf("ServerRoot(%q) = %q, want %q", tc.base, got, tc.root)
		}
	}
}
