package daemon_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/neuraphage/neuraphage-go/internal/api"
	"github.com/neuraphage/neuraphage-go/internal/config"
	"github.com/neuraphage/neuraphage-go/internal/daemon"
	"github.com/neuraphage/neuraphage-go/internal/task"
	"github.com/neuraphage/neuraphage-go/internal/testkit"
)

// externalNATS starts a NATS server with JetStream on a loopback port,
// as a user would run one for cluster.nats_url: token authentication,
// its own store directory.
func externalNATS(t *testing.T, token string) string {
	t.Helper()
	ns, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: shortTemp(t),
		Authorization: token, NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(testkit.WaitLimit) {
		ns.Shutdown()
		t.Fatal("the NATS server did not become ready")
	}
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns.ClientURL()
}

// With cluster.nats_url the coordinator uses a NATS server of its own
// (no embedded one): it connects with NEURAPHAGE_NATS_TOKEN, a worker
// joins the URL join-info names with the same NEURAPHAGE_NATS_TOKEN in
// its environment (its np1 token still names it), and a task runs on it
// and lands.
func TestClusterExternalNATSServer(t *testing.T) {
	t.Parallel()
	const token = "external-nats-token"
	url := externalNATS(t, token)
	d := startClusterEnv(t, markerScript(1, 2, ""), map[string]string{"NEURAPHAGE_NATS_TOKEN": token},
		func(c *config.Config) { c.Cluster.NatsURL = url })
	info, err := d.client.ClusterJoin(context.Background(), api.JoinRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.URL != url {
		t.Errorf("join-info names %s, want the external server %s", info.URL, url)
	}
	w := d.worker(t, 1, func(o *daemon.WorkerOptions) {
		o.Getenv = func(k string) string {
			if k == "NEURAPHAGE_NATS_TOKEN" {
				return token
			}
			return ""
		}
	})
	id := d.create(t, api.CreateTaskRequest{Description: "marker task 1"}).ID
	if done := d.finish(t, id); done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("task is %s (%s), want completed", done.Status, done.CloseReason)
	}
	if as := d.assignments(t, id); len(as) != 1 || as[0].Worker != w {
		t.Errorf("assignments %+v, want one on %s", as, w)
	}
	if got, want := d.onMain(t, "markers-1.txt"), "t1-step-1\nt1-step-2\n"; got != want {
		t.Errorf("markers on main = %q, want %q", got, want)
	}
	// Without the server's token a worker is refused, and says so.
	err = runWorkerOnce(t, url, info.Token, "")
	if err == nil || !strings.Contains(err.Error(), "joining "+url) || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("a worker without NEURAPHAGE_NATS_TOKEN: %v, want an authorization error", err)
	}
}

// runWorkerOnce runs a worker that is expected not to get in, and returns
// its error.
func runWorkerOnce(t *testing.T, join, token, ca string) error {
	t.Helper()
	home := shortTemp(t)
	p, err := config.ResolvePaths(func(k string) string {
		if k == "NEURAPHAGE_HOME" {
			return home
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitLimit)
	defer cancel()
	return daemon.RunWorker(ctx, daemon.WorkerOptions{Paths: p, Config: config.Default(), Getenv: func(string) string { return "" },
		Join: join, Token: token, CAFile: ca, Capacity: 1, Logger: slog.New(slog.DiscardHandler)})
}

// testCA writes a CA's certificate and a server certificate it signed
// for 127.0.0.1 (with its key) into dir, and returns their paths.
func testCA(t *testing.T, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "neuraphage test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "coordinator"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("cert.pem", "CERTIFICATE", der), write("key.pem", "EC PRIVATE KEY", keyDER)
}

// With cluster.tls_cert and tls_key the NATS link and the git server are
// TLS: a worker given the CA (--ca) joins, fetches and pushes over https,
// and its task lands; a worker without the CA is refused with an error
// that says the certificate is not trusted and how to give the CA.
func TestClusterTLSLink(t *testing.T) {
	t.Parallel()
	ca, cert, key := testCA(t, shortTemp(t))
	d := startCluster(t, markerScript(1, 2, ""), func(c *config.Config) { c.Cluster.TLSCert, c.Cluster.TLSKey = cert, key })
	info, err := d.client.ClusterJoin(context.Background(), api.JoinRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(info.URL, "tls://") {
		t.Fatalf("join-info names %s, want a tls:// URL", info.URL)
	}
	err = runWorkerOnce(t, info.URL, info.Token, "")
	if err == nil || !strings.Contains(err.Error(), "not trusted") || !strings.Contains(err.Error(), "--ca") {
		t.Errorf("a worker without the CA: %v, want a clear certificate error", err)
	}
	w := d.worker(t, 1, func(o *daemon.WorkerOptions) { o.CAFile = ca })
	id := d.create(t, api.CreateTaskRequest{Description: "marker task 1"}).ID
	if done := d.finish(t, id); done.Status != task.Completed {
		d.dump(t)
		t.Fatalf("task is %s (%s), want completed", done.Status, done.CloseReason)
	}
	as := d.assignments(t, id)
	if len(as) != 1 || as[0].Worker != w {
		t.Fatalf("assignments %+v, want one on %s", as, w)
	}
	if got, want := d.onMain(t, "markers-1.txt"), "t1-step-1\nt1-step-2\n"; got != want {
		t.Errorf("markers on main = %q, want %q", got, want)
	}
}
