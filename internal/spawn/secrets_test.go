package spawn

import (
	"os"
	"slices"
	"strconv"
	"testing"
)

func TestSecretsHoldsBackKeysTokensAndOwnVariables(t *testing.T) {
	env := []string{
		"PATH=/bin", "HOME=/home/u", "ANTHROPIC_API_KEY=sk-1", "GH_TOKEN=g",
		"NEURAPHAGE_HOME=/h", "MY_KEY=k", SecretsFDEnv + "=3", "LANG=C",
	}
	keep, held := Secrets(env, []string{"MY_KEY", ""})
	if want := []string{"PATH=/bin", "HOME=/home/u", "LANG=C"}; !slices.Equal(keep, want) {
		t.Errorf("keep = %q, want %q", keep, want)
	}
	if want := []string{"ANTHROPIC_API_KEY=sk-1", "GH_TOKEN=g", "NEURAPHAGE_HOME=/h", "MY_KEY=k"}; !slices.Equal(held, want) {
		t.Errorf("held = %q, want %q", held, want)
	}
}

func TestHandOverCarriesValuesWithAnyBytes(t *testing.T) {
	held := []string{"A_API_KEY=x=y\nz", "B_TOKEN="}
	r, err := handOver(held)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("A_API_KEY", "")
	t.Setenv("B_TOKEN", "old")
	t.Setenv(SecretsFDEnv, "")
	// receive closes the descriptor it reads.
	if err := receive(strconv.Itoa(int(r.Fd()))); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("A_API_KEY"); got != "x=y\nz" {
		t.Errorf("A_API_KEY = %q", got)
	}
	if got := os.Getenv("B_TOKEN"); got != "" {
		t.Errorf("B_TOKEN = %q", got)
	}
}

func TestHandOverRefusesTooMuch(t *testing.T) {
	big := make([]byte, maxSecrets)
	if _, err := handOver([]string{"X_TOKEN=" + string(big)}); err == nil {
		t.Fatal("handOver accepted more than a pipe holds")
	}
}

func TestReceiveRefusesABadDescriptor(t *testing.T) {
	t.Setenv(SecretsFDEnv, "")
	if err := receive("stdin"); err == nil {
		t.Fatal("receive accepted a descriptor that is not a number")
	}
}
