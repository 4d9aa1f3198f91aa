package client

import (
	"context"
	"net/http"

	"github.com/neuraphage/neuraphage-go/internal/api"
)

// Web starts the daemon's web dashboard when it is not running and
// returns a one-time sign-in link; rotate ends every session first.
func (c *Client) Web(ctx context.Context, rotate bool) (api.WebLogin, error) {
	var l api.WebLogin
	err := c.do(ctx, http.MethodPost, "/v1/web", api.WebRequest{Rotate: rotate}, &l)
	return l, err
}
