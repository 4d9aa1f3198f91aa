package api

// The web dashboard's door on the socket (docs/web.md):
//
//	POST /v1/web                          WebRequest → WebLogin: starts the
//	                                      dashboard when it is not running and
//	                                      mints a one-time sign-in link

// WebRequest asks for the dashboard and a sign-in link.
type WebRequest struct {
	// Rotate ends every dashboard session and unused link first.
	Rotate bool `json:"rotate,omitempty"`
}

// WebLogin is where the dashboard listens and a link that signs a browser
// in once.
type WebLogin struct {
	// URL is the dashboard's address; LoginURL signs in once (within 15
	// minutes) and then drops the token from the address bar.
	URL      string `json:"url"`
	LoginURL string `json:"login_url"`
	// Started is true when this request started the dashboard.
	Started bool `json:"started,omitempty"`
}
