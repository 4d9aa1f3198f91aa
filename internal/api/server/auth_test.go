package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/api/server"
)

func TestRequireToken(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	for _, tt := range []struct {
		name, token, auth string
		want              int
	}{
		{"right token", "s3cret", "Bearer s3cret", http.StatusNoContent},
		{"no token", "s3cret", "", http.StatusUnauthorized},
		{"wrong token", "s3cret", "Bearer s3cre", http.StatusUnauthorized},
		{"token not as bearer", "s3cret", "s3cret", http.StatusUnauthorized},
		{"daemon without a token refuses all", "", "Bearer ", http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/v1/health", nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			server.RequireToken(ok, tt.token, "/run/api.token").ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Errorf("status = %d, want %d (%s)", rec.Code, tt.want, rec.Body)
			}
		})
	}
}
