package gitserve

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/git"
)

// The smart HTTP protocol (gitprotocol-http): a GET of info/refs?service=…
// advertises the refs, a POST to git-upload-pack (fetch) or
// git-receive-pack (push) carries the exchange. Only protocol v0 is spoken
// (a client's Git-Protocol header is not passed on): with it, upload-pack
// checks that every object a worker asks for is reachable from a ref it was
// shown.

const (
	uploadPack  = "git-upload-pack"
	receivePack = "git-receive-pack"
)

// ServeHTTP serves task/<id>/<epoch>/info/refs, …/git-upload-pack and
// …/git-receive-pack. The coordinator mounts it with http.StripPrefix.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	task, epoch, rest, ok := splitPath(r.URL.Path)
	if !ok {
		http.Error(w, "not found: this server serves task/<id>/<epoch>/ over git's smart HTTP protocol", http.StatusNotFound)
		return
	}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case rest == "info/refs" && r.Method == http.MethodGet:
		s.serveRefs(w, r, task, epoch, token)
	case rest == uploadPack && r.Method == http.MethodPost:
		s.serveUpload(w, r, task, epoch, token)
	case rest == receivePack && r.Method == http.MethodPost:
		s.serveReceive(w, r, task, epoch, token)
	case rest == "info/refs" || rest == uploadPack || rest == receivePack:
		w.Header().Set("Allow", map[bool]string{true: "GET", false: "POST"}[rest == "info/refs"])
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		http.Error(w, "not found: only git's smart HTTP protocol is served (no dumb HTTP)", http.StatusNotFound)
	}
}

// splitPath parses "[/]task/<id>/<epoch>/<rest>".
func splitPath(p string) (task string, epoch uint64, rest string, ok bool) {
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 4)
	if len(parts) != 4 || parts[0] != "task" || !validName(parts[1]) {
		return "", 0, "", false
	}
	e, err := strconv.ParseUint(parts[2], 10, 64)
	if err != nil {
		return "", 0, "", false
	}
	return parts[1], e, parts[3], true
}

// deny answers a refused request with 403 and msg as text/plain, which git
// prints as "remote: <msg>".
func (s *Server) deny(w http.ResponseWriter, r *http.Request, task string, epoch uint64, err error) {
	var ref *refused
	if !errors.As(err, &ref) {
		s.log.Error("serving a git request", "task_id", task, "epoch", epoch, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	s.log.Warn("git request refused", "task_id", task, "epoch", epoch, "path", r.URL.Path, "remote", r.RemoteAddr, "reason", ref.msg)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusForbidden)
	io.WriteString(w, ref.msg+"\n")
}

func (s *Server) serveRefs(w http.ResponseWriter, r *http.Request, task string, epoch uint64, token string) {
	svc := r.URL.Query().Get("service")
	if svc != uploadPack && svc != receivePack {
		http.Error(w, "only git's smart HTTP protocol is served: info/refs needs ?service=git-upload-pack or git-receive-pack", http.StatusForbidden)
		return
	}
	a, _, err := s.admit(token, task, epoch, false)
	if err != nil {
		s.deny(w, r, task, epoch, err)
		return
	}
	var out bytes.Buffer
	out.Write(pkt("# service=" + svc + "\n"))
	out.WriteString(flushPkt)
	if err := git.Stream(r.Context(), a.Repo, gitEnv(a), nil, &out, strings.TrimPrefix(svc, "git-"), "--stateless-rpc", "--advertise-refs", "."); err != nil {
		s.deny(w, r, task, epoch, fmt.Errorf("advertising the refs of %s: %w", a.Repo, err))
		return
	}
	noCache(w, "application/x-"+svc+"-advertisement")
	w.Write(out.Bytes())
}

func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request, task string, epoch uint64, token string) {
	a, _, err := s.admit(token, task, epoch, false)
	if err != nil {
		s.deny(w, r, task, epoch, err)
		return
	}
	body, err := requestBody(r, 64<<20)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	defer body.Close()
	s.run(w, r, a, body, "upload-pack")
}

func (s *Server) serveReceive(w http.ResponseWriter, r *http.Request, task string, epoch uint64, token string) {
	// A stranger is turned away before a byte of the body is read; a
	// worker's push is refused after its commands are read, so that git
	// can show why.
	if !s.known(token) {
		s.deny(w, r, task, epoch, errNoToken)
		return
	}
	body, err := requestBody(r, s.maxPush)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	defer body.Close()
	br := bufio.NewReaderSize(body, 64<<10)
	req, err := parsePush(br)
	if err != nil {
		s.log.Warn("malformed push refused", "task_id", task, "epoch", epoch, "remote", r.RemoteAddr, "err", err)
		http.Error(w, "push refused: "+err.Error(), http.StatusBadRequest)
		return
	}
	a, done, err := s.admit(token, task, epoch, true)
	if err != nil && len(req.Updates) == 0 {
		s.deny(w, r, task, epoch, err)
		return
	}
	reasons := map[string]string{}
	summary := ""
	if err != nil {
		summary = err.Error()
		for _, u := range req.Updates {
			reasons[u.Ref] = summary
		}
	} else {
		defer done()
		for _, u := range req.Updates {
			if why := checkUpdate(a, u); why != "" {
				reasons[u.Ref] = why
				if summary == "" {
					summary = "push refused: " + u.Ref + ": " + why
				}
			}
		}
		if summary != "" {
			for _, u := range req.Updates {
				if reasons[u.Ref] == "" {
					reasons[u.Ref] = "refused with the rest of this push"
				}
			}
		}
	}
	if summary != "" {
		s.log.Warn("push refused", "task_id", task, "epoch", epoch, "remote", r.RemoteAddr, "reason", summary)
		// Read the pack the client is sending, so it reads the answer
		// instead of failing on a closed connection.
		io.Copy(io.Discard, br)
		noCache(w, "application/x-git-receive-pack-result")
		w.Write(refusal(req, reasons, summary))
		return
	}
	s.run(w, r, a, io.MultiReader(bytes.NewReader(req.Head), br), "receive-pack")
}

// run streams git's stateless-rpc service (upload-pack or receive-pack)
// for a's repository between the request and the response.
func (s *Server) run(w http.ResponseWriter, r *http.Request, a Assignment, in io.Reader, service string) {
	out := &streamWriter{w: w, rc: http.NewResponseController(w), ctype: "application/x-git-" + service + "-result"}
	err := git.Stream(r.Context(), a.Repo, gitEnv(a), in, out, service, "--stateless-rpc", ".")
	if err == nil {
		if !out.started {
			noCache(w, out.ctype)
		}
		return
	}
	if errors.Is(r.Context().Err(), context.Canceled) {
		s.log.Info("git request ended by the client", "task_id", a.Task, "worker", a.Worker, "service", service)
	} else {
		s.log.Error("serving git "+service, "task_id", a.Task, "worker", a.Worker, "err", err)
	}
	if !out.started {
		http.Error(w, service+" failed on the coordinator", http.StatusInternalServerError)
	}
}

// streamWriter sends git's output as it comes, headers first.
type streamWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	ctype   string
	started bool
}

func (o *streamWriter) Write(p []byte) (int, error) {
	if !o.started {
		o.started = true
		noCache(o.w, o.ctype)
	}
	n, err := o.w.Write(p)
	if err == nil {
		o.rc.Flush()
	}
	return n, err
}

func noCache(w http.ResponseWriter, ctype string) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "no-cache, max-age=0, must-revalidate")
}

// requestBody returns r's body, bounded by max bytes, gunzipped when the
// client compressed it.
func requestBody(r *http.Request, max int64) (io.ReadCloser, error) {
	body := http.MaxBytesReader(nil, r.Body, max)
	switch r.Header.Get("Content-Encoding") {
	case "", "identity":
		return body, nil
	case "gzip", "x-gzip":
		z, err := gzip.NewReader(body)
		if err != nil {
			body.Close()
			return nil, fmt.Errorf("reading a gzip request body: %w", err)
		}
		// Bounded after decompression too: no gzip bomb.
		return struct {
			io.Reader
			io.Closer
		}{io.LimitReader(z, max), body}, nil
	}
	body.Close()
	return nil, fmt.Errorf("content encoding %q is not supported", r.Header.Get("Content-Encoding"))
}

// gitEnv is the configuration git serves a's repository with, given as
// command-line scope (GIT_CONFIG_*) so that it overrides the repository's
// own: every ref but the base branch and the task's branches hidden, no
// object beyond what the shown refs reach, and pushes that never rewrite
// or delete a ref.
func gitEnv(a Assignment) []string {
	kv := [][2]string{
		{"transfer.hideRefs", "refs"},
		{"transfer.hideRefs", "HEAD"},
		{"transfer.hideRefs", "!refs/heads/" + a.Base},
		{"transfer.hideRefs", "!refs/heads/" + BranchPrefix + a.Task},
		{"uploadpack.allowTipSHA1InWant", "false"},
		{"uploadpack.allowReachableSHA1InWant", "false"},
		{"uploadpack.allowAnySHA1InWant", "false"},
		{"uploadpack.allowFilter", "false"},
		{"receive.denyNonFastForwards", "true"},
		{"receive.denyDeletes", "true"},
		{"receive.denyCurrentBranch", "refuse"},
		{"receive.fsckObjects", "true"},
		{"receive.autogc", "false"},
		{"receive.advertisePushOptions", "false"},
	}
	return configEnv(kv, "GIT_PROTOCOL=", "GIT_NAMESPACE=")
}

// configEnv turns key/value pairs into GIT_CONFIG_COUNT, GIT_CONFIG_KEY_n
// and GIT_CONFIG_VALUE_n, followed by extra.
func configEnv(kv [][2]string, extra ...string) []string {
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(kv))}
	for i, p := range kv {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, p[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, p[1]))
	}
	return append(env, extra...)
}
