package server

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

// RequireToken wraps h so that only requests carrying token as a bearer
// token ("Authorization: Bearer <token>") reach it; the others, the health
// probe among them, are answered 401 with a message naming tokenFile, where
// a client finds the token. Whoever can connect to the socket but not read
// tokenFile (a task's sandboxed command where Landlock does not control
// connecting to UNIX sockets) can do nothing. An empty token refuses every
// request.
func RequireToken(h http.Handler, token, tokenFile string) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		switch {
		case token != "" && subtle.ConstantTimeCompare([]byte(got), want) == 1:
			h.ServeHTTP(w, r)
		case !strings.HasPrefix(got, "Bearer "):
			writeJSON(w, http.StatusUnauthorized, api.Error{Code: api.CodeUnauthorized,
				Message: "not authorised: this client cannot read " + tokenFile + ", the daemon's API token"})
		default:
			writeJSON(w, http.StatusUnauthorized, api.Error{Code: api.CodeUnauthorized,
				Message: "not authorised: the API token sent is not the one in " + tokenFile})
		}
	})
}
