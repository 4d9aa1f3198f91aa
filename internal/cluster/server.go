package cluster

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerOptions configures the embedded NATS server.
type ServerOptions struct {
	// Listen is host:port (port 0: a free one).
	Listen string
	// StoreDir is JetStream's directory.
	StoreDir string
	// TLSCert and TLSKey, when set, make the listener TLS.
	TLSCert, TLSKey string
	// Tokens checks workers' tokens.
	Tokens *Tokens
}

// Server is the embedded NATS server with JetStream.
type Server struct {
	ns *server.Server
	// Internal is the coordinator's own token.
	Internal string
	tls      bool
	cert     []byte // the listener's certificate (DER), when TLS
}

// StartServer starts the embedded server and waits until it accepts
// connections.
func StartServer(o ServerOptions) (*Server, error) {
	host, portS, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, fmt.Errorf("cluster.listen %q: %w", o.Listen, err)
	}
	port, err := strconv.Atoi(portS)
	if err != nil {
		return nil, fmt.Errorf("cluster.listen %q: bad port", o.Listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	s := &Server{Internal: "np-internal." + hex.EncodeToString(b[:])}
	opts := &server.Options{
		Host: host, Port: port, JetStream: true, StoreDir: o.StoreDir,
		NoLog: true, NoSigs: true, MaxPayload: 8 << 20,
		CustomClientAuthentication: &auth{internal: s.Internal, tokens: o.Tokens},
	}
	if o.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("cluster TLS: %w", err)
		}
		opts.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		opts.TLS = true
		s.tls, s.cert = true, cert.Certificate[0]
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("starting the NATS server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("the NATS server did not become ready")
	}
	s.ns = ns
	return s, nil
}

// URL is the client URL of the listener.
func (s *Server) URL() string {
	addr := s.ns.Addr().(*net.TCPAddr)
	scheme := "nats"
	if s.tls {
		scheme = "tls"
	}
	return fmt.Sprintf("%s://%s", scheme, net.JoinHostPort(addr.IP.String(), strconv.Itoa(addr.Port)))
}

// ClientTLS is the TLS configuration of the coordinator's own connection
// to a TLS listener (nil without TLS): it trusts exactly the listener's
// certificate, whatever CA signed it and whatever names it holds (the
// coordinator dials the address it listens on).
func (s *Server) ClientTLS() *tls.Config {
	if !s.tls {
		return nil
	}
	want := s.cert
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Verification is the pinning below, not a CA chain.
		InsecureSkipVerify: true, //nolint:gosec
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || !bytes.Equal(raw[0], want) {
				return errors.New("the NATS server's certificate is not the coordinator's own")
			}
			return nil
		},
	}
}

// Shutdown stops the server and waits for it.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// auth admits the coordinator's internal token and the workers' tokens;
// a worker's connection is named after it.
type auth struct {
	internal string
	tokens   *Tokens
}

func (a *auth) Check(c server.ClientAuthentication) bool {
	tok := c.GetOpts().Token
	if tok != "" && tok == a.internal {
		c.RegisterUser(&server.User{Username: "coordinator"})
		return true
	}
	if a.tokens == nil {
		return false
	}
	w, _, ok := a.tokens.Check(tok)
	if !ok {
		return false
	}
	c.RegisterUser(&server.User{Username: w, Permissions: workerPermissions(w)})
	return true
}

// workerPermissions is what a worker's connection may do: speak for its
// runs (np.up, np.host: the coordinator checks each run's secret), beat,
// read and acknowledge its own work queue only, read the injection
// consumers whose names it knows (a run's is named after its secret, which
// only its assignment carries) but neither make nor list any, and receive
// replies on its own inbox prefix.
func workerPermissions(w string) *server.Permissions {
	work := StreamWork + "." + workConsumer(w)
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			"np.up.*", "np.host.*",
			"$KV." + BucketWorkers + "." + w,
			"$JS.API.INFO",
			"$JS.API.STREAM.INFO.KV_" + BucketWorkers,
			"$JS.API.CONSUMER.INFO." + work,
			"$JS.API.CONSUMER.MSG.NEXT." + work,
			"$JS.ACK." + work + ".>",
			"$JS.API.CONSUMER.INFO." + StreamInject + ".*",
			"$JS.API.CONSUMER.MSG.NEXT." + StreamInject + ".*",
			"$JS.ACK." + StreamInject + ".>",
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{InboxPrefix(w) + ".>"}},
	}
}

// InboxPrefix is a worker's reply subjects' prefix.
func InboxPrefix(worker string) string { return "_INBOX_" + worker }
