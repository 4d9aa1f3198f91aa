package proc

import (
	"slices"
	"testing"
)

func TestWithoutSecrets(t *testing.T) {
	t.Parallel()
	got := WithoutSecrets([]string{"PATH=/bin", "ANTHROPIC_API_KEY=k", "gh_token=t", "NEURAPHAGE_HOME=/h", "TOKENS=3", "API_KEY_FILE=f", "GOPATH=/go"})
	want := []string{"PATH=/bin", "TOKENS=3", "API_KEY_FILE=f", "GOPATH=/go"}
	if !slices.Equal(got, want) {
		t.Errorf("WithoutSecrets = %q, want %q", got, want)
	}
}
