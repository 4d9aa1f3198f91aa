// Package deploy_test keeps the deployment files (docker-compose.yml, the
// Dockerfile, its entry point, the systemd units) from rotting: they are
// parsed and checked here, and verified by systemd-analyze when the machine
// has it. Docker itself is not run: tests have no registry to pull from.
package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/neuraphage/neuraphage-go/internal/proc"
)

type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image       string            `yaml:"image"`
	Build       composeBuild      `yaml:"build"`
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	ReadOnly    bool              `yaml:"read_only"`
	CapDrop     []string          `yaml:"cap_drop"`
	SecurityOpt []string          `yaml:"security_opt"`
	DependsOn   []string          `yaml:"depends_on"`
}

type composeBuild struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

// TestComposeFile: one coordinator and at least three workers from the
// same image built by deploy/Dockerfile, workers joining through
// NEURAPHAGE_JOIN_URL and their own NEURAPHAGE_JOIN_TOKEN, never a token in a
// command, every container non-privileged.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	coord, ok := f.Services["coordinator"]
	if !ok {
		t.Fatal("no coordinator service")
	}
	if want := []string{"daemon", "start", "--foreground"}; !slices.Equal(coord.Command, want) {
		t.Errorf("coordinator command %q, want %q", coord.Command, want)
	}
	if !slices.ContainsFunc(coord.Volumes, func(v string) bool { return strings.HasPrefix(v, "./coordinator.yaml:") }) {
		t.Errorf("the coordinator does not mount coordinator.yaml: %q", coord.Volumes)
	}
	tokens := map[string]string{}
	workers := 0
	for name, s := range f.Services {
		if s.Image != coord.Image || s.Build != coord.Build {
			t.Errorf("%s: image %q build %+v, want the coordinator's %q %+v", name, s.Image, s.Build, coord.Image, coord.Build)
		}
		if s.Build.Dockerfile != "deploy/Dockerfile" || s.Build.Context != ".." {
			t.Errorf("%s: build %+v, want deploy/Dockerfile from the repository's root", name, s.Build)
		}
		if !s.ReadOnly || !slices.Contains(s.CapDrop, "ALL") || !slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
			t.Errorf("%s: read_only %v, cap_drop %q, security_opt %q: want a read-only, unprivileged container", name, s.ReadOnly, s.CapDrop, s.SecurityOpt)
		}
		for _, arg := range s.Command {
			if strings.Contains(strings.ToLower(arg), "token") {
				t.Errorf("%s: a token in the command %q (visible in ps)", name, s.Command)
			}
		}
		if !strings.HasPrefix(name, "worker-") {
			continue
		}
		workers++
		if !slices.Equal(s.Command, []string{"worker"}) || !slices.Contains(s.DependsOn, "coordinator") {
			t.Errorf("%s: command %q depends_on %q", name, s.Command, s.DependsOn)
		}
		for _, k := range []string{"NEURAPHAGE_HOME", "NEURAPHAGE_JOIN_URL", "NEURAPHAGE_JOIN_TOKEN", "GIT_SSL_CAINFO", "SSL_CERT_FILE"} {
			if s.Environment[k] == "" {
				t.Errorf("%s: no %s", name, k)
			}
		}
		tok := s.Environment["NEURAPHAGE_JOIN_TOKEN"]
		if other, dup := tokens[tok]; dup {
			t.Errorf("%s and %s share a token variable %s: a token names its worker", name, other, tok)
		}
		tokens[tok] = name
		if !slices.Contains(s.Volumes, "/var/lib/neuraphage") {
			t.Errorf("%s: no home volume of its own: %q", name, s.Volumes)
		}
	}
	if workers < 3 {
		t.Errorf("%d workers, want at least 3", workers)
	}
	for _, v := range coord.Volumes {
		if name, _, ok := strings.Cut(v, ":"); ok && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "/") && !strings.HasPrefix(name, "$") {
			if _, ok := f.Volumes[name]; !ok {
				t.Errorf("coordinator volume %s is not declared", name)
			}
		}
	}
}

// TestCoordinatorConfig: the compose coordinator's config turns the cluster
// on, off loopback with TLS, and names the certificates certs.sh makes.
func TestCoordinatorConfig(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("coordinator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Cluster map[string]any `yaml:"cluster"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("coordinator.yaml: %v", err)
	}
	if cfg.Cluster["enabled"] != true {
		t.Errorf("cluster.enabled is %v", cfg.Cluster["enabled"])
	}
	for _, k := range []string{"listen", "advertise", "tls_cert", "tls_key", "git_listen", "git_url"} {
		if s, _ := cfg.Cluster[k].(string); s == "" {
			t.Errorf("cluster.%s is not set", k)
		}
	}
	if u, _ := cfg.Cluster["git_url"].(string); !strings.HasPrefix(u, "https://") {
		t.Errorf("cluster.git_url %q is not https", u)
	}
}

// TestDockerfile: a multi-stage build of a static binary, run by a
// non-root user, with git in the image.
func TestDockerfile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(text, -1)
	if len(froms) < 2 || !strings.HasPrefix(froms[0][1], "golang:") {
		t.Fatalf("stages %q: want a golang build stage and a run stage", froms)
	}
	for _, want := range []string{"CGO_ENABLED=0", "./cmd/neuraphage", "COPY --from=build", "git", "ENTRYPOINT", "deploy/entrypoint.sh"} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	users := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindAllStringSubmatch(text, -1)
	if len(users) == 0 {
		t.Fatal("no USER: the image would run as root")
	}
	if u := users[len(users)-1][1]; u == "root" || u == "0" || strings.HasPrefix(u, "0:") {
		t.Errorf("the image runs as %s", u)
	}
}

// TestEntrypointKeepsTheTokenOffTheCommandLine: the image's entry point
// turns NEURAPHAGE_JOIN_URL and NEURAPHAGE_JOIN_TOKEN into `worker --join
// URL` with the token in NEURAPHAGE_WORKER_TOKEN, and passes other
// commands through untouched.
func TestEntrypointKeepsTheTokenOffTheCommandLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fake := filepath.Join(dir, "neuraphage")
	script := "#!/bin/sh\nprintf 'args:%s\\n' \"$*\"\nprintf 'token:%s\\n' \"${NEURAPHAGE_WORKER_TOKEN:-}\"\nprintf 'join-token:%s\\n' \"${NEURAPHAGE_JOIN_TOKEN:-}\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	entry, err := filepath.Abs("entrypoint.sh")
	if err != nil {
		t.Fatal(err)
	}
	const secret = "np1.w1.0123456789abcdef"
	env := []string{"PATH=/usr/bin:/bin", "NEURAPHAGE_BIN=" + fake, "NEURAPHAGE_JOIN_URL=tls://coordinator:7422",
		"NEURAPHAGE_JOIN_TOKEN=" + secret, "NEURAPHAGE_WORKER_LABELS=gpu=a100", "NEURAPHAGE_WORKER_CAPACITY=4"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"worker"}, []string{"args:worker --capacity 4 --labels gpu=a100 --join tls://coordinator:7422", "token:" + secret, "join-token:\n"}},
		{[]string{"worker", "--capacity", "1"}, []string{"args:worker --capacity 4 --labels gpu=a100 --join tls://coordinator:7422 --capacity 1"}},
		{[]string{"worker", "drain"}, []string{"args:worker drain", "token:\n"}},
		{[]string{"daemon", "start", "--foreground"}, []string{"args:daemon start --foreground", "token:\n"}},
	} {
		res, err := proc.Run(context.Background(), proc.Cmd{Args: append([]string{"/bin/sh", entry}, tc.args...), Env: env})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("entrypoint %q: %v exit %d\n%s", tc.args, err, res.ExitCode, res.Output)
		}
		for _, w := range tc.want {
			if !strings.Contains(res.Output, w) {
				t.Errorf("entrypoint %q printed\n%s\nwant %q", tc.args, res.Output, w)
			}
		}
		if line, _, _ := strings.Cut(res.Output, "\n"); strings.Contains(line, secret) {
			t.Errorf("the token is on the command line: %s", line)
		}
	}
}
