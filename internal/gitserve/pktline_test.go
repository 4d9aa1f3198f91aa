package gitserve

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

var (
	oidA = strings.Repeat("a", 40)
	oidB = strings.Repeat("b", 40)
	oid0 = strings.Repeat("0", 40)
)

func TestParsePush(t *testing.T) {
	t.Parallel()
	body := string(pkt("shallow "+oidA+"\n")) +
		string(pkt(oidA+" "+oidB+" refs/heads/x\x00report-status side-band-64k agent=git/2\n")) +
		string(pkt(oid0+" "+oidB+" refs/heads/y\n")) + flushPkt + "PACK..."
	r := bufio.NewReader(strings.NewReader(body))
	req, err := parsePush(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Updates) != 2 || req.Updates[0] != (refUpdate{oidA, oidB, "refs/heads/x"}) || req.Updates[1] != (refUpdate{oid0, oidB, "refs/heads/y"}) {
		t.Fatalf("updates %+v", req.Updates)
	}
	if !req.Caps["report-status"] || !req.Caps["side-band-64k"] || !req.Caps["agent"] {
		t.Fatalf("caps %v", req.Caps)
	}
	rest := new(bytes.Buffer)
	rest.ReadFrom(r)
	if string(req.Head)+rest.String() != body {
		t.Fatalf("head and rest do not give the body back:\n%q\n%q", req.Head, rest.String())
	}
}

func TestParsePushRefusesMalformed(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"no flush":     string(pkt(oidA + " " + oidB + " refs/heads/x\n")),
		"bad length":   "zzzz",
		"short length": "0003",
		"bad oid":      string(pkt("xyz "+oidB+" refs/heads/x\n")) + flushPkt,
		"no ref":       string(pkt(oidA+" "+oidB+"\n")) + flushPkt,
		"push cert":    string(pkt("push-cert\x00report-status\n")) + flushPkt,
		"truncated":    "00ffabc",
	} {
		if _, err := parsePush(bufio.NewReader(strings.NewReader(body))); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// TestRefusalFraming: the answer to a refused push is report-status in
// side band 1, with the summary on band 2, as git reads it.
func TestRefusalFraming(t *testing.T) {
	t.Parallel()
	req := &pushRequest{Updates: []refUpdate{{oidA, oidB, "refs/heads/main"}}, Caps: map[string]bool{"side-band-64k": true, "report-status": true}}
	out := refusal(req, map[string]string{"refs/heads/main": "not yours\nsecond line"}, "push refused")
	r := bufio.NewReader(bytes.NewReader(out))
	var bands [3]bytes.Buffer
	for {
		data, err := readPkt(r)
		if err == errFlush {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		bands[data[0]].Write(data[1:])
	}
	if got := bands[2].String(); got != "push refused\n" {
		t.Errorf("band 2 %q", got)
	}
	want := string(pkt("unpack ok\n")) + string(pkt("ng refs/heads/main not yours second line\n")) + flushPkt
	if got := bands[1].String(); got != want {
		t.Errorf("band 1 %q, want %q", got, want)
	}
}

func FuzzParsePush(f *testing.F) {
	f.Add([]byte(string(pkt(oidA+" "+oidB+" refs/heads/x\x00report-status\n")) + flushPkt))
	f.Add([]byte("0000"))
	f.Add([]byte("0004"))
	upper := pkt(oidA + " " + oidB + " refs/heads/x\x00report-status side-band-64k\n")
	copy(upper, strings.ToUpper(string(upper[:4])))
	f.Add(append(upper, flushPkt...))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := bufio.NewReader(bytes.NewReader(body))
		req, err := parsePush(r)
		if err != nil {
			return
		}
		rest := new(bytes.Buffer)
		rest.ReadFrom(r)
		if !bytes.Equal(append(append([]byte{}, req.Head...), rest.Bytes()...), body) {
			t.Fatalf("head and rest do not give the body back")
		}
		for _, u := range req.Updates {
			if !validOID(u.Old) || !validOID(u.New) || u.Ref == "" {
				t.Fatalf("accepted update %+v", u)
			}
		}
	})
}

// TestParsePushBounds: endless shallow lines or commands end in an error,
// not in memory.
func TestParsePushBounds(t *testing.T) {
	t.Parallel()
	line := string(pkt("shallow " + oidA + "\n"))
	body := strings.Repeat(line, maxCommandBytes/len(line)+2) + flushPkt
	if _, err := parsePush(bufio.NewReader(strings.NewReader(body))); err == nil {
		t.Fatal("parsed more than maxCommandBytes of shallow lines")
	}
	cmd := string(pkt(oidA + " " + oidB + " refs/heads/x\n"))
	body = strings.Repeat(cmd, maxCommands+1) + flushPkt
	if _, err := parsePush(bufio.NewReader(strings.NewReader(body))); err == nil {
		t.Fatal("parsed more than maxCommands updates")
	}
}

func TestPlainRef(t *testing.T) {
	t.Parallel()
	for ref, want := range map[string]bool{
		"refs/heads/neuraphage/t-a/work":       true,
		"refs/heads/neuraphage/t-a/e3":         true,
		"refs/heads/neuraphage/t-a/../../main": false,
		"refs/heads/neuraphage/t-a/x.lock":     false,
		"refs/heads/neuraphage/t-a/x/":         false,
		"refs/heads/neuraphage/t-a//x":         false,
		"refs/heads/neuraphage/t-a/.hidden":    false,
		"refs/heads/neuraphage/t-a/a b":        false,
		"refs/heads/neuraphage/t-a/x@{1}":      false,
		"refs/heads/neuraphage/t-a/x~1":        false,
		"refs/heads/neuraphage/t-a/x\\y":       false,
		"refs/heads/neuraphage/t-a/x\x7f":      false,
	} {
		if got := plainRef(ref); got != want {
			t.Errorf("plainRef(%q) = %v, want %v", ref, got, want)
		}
	}
}
