package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/neuraphage/neuraphage-go/internal/spawn"
)

func (a *app) newWebCmd() *cobra.Command {
	var noOpen bool
	cmd := &cobra.Command{
		Use:   "web",
		Short: "Open the web dashboard (prints a one-time sign-in link)",
		Long: `Web starts the daemon's web dashboard when it is not running (web.enabled
starts it with the daemon) and prints its address and a sign-in link that
works once, within 15 minutes; the browser keeps an HttpOnly session cookie.
With a display at hand it opens the link (xdg-open) unless --no-open.

The dashboard listens on web.listen (127.0.0.1:7474 by default): reach it
from elsewhere through an SSH tunnel or a VPN, not the open internet. See
docs/web.md.`,
		Args: cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runWeb(cmd.Context(), false, !noOpen, cmd.OutOrStdout())
		}),
	}
	cmd.Flags().BoolVar(&noOpen, "no-open", false, "print the link only; do not open a browser")
	var rotate bool
	token := &cobra.Command{
		Use:   "token",
		Short: "Print a new sign-in link; --rotate signs every browser out first",
		Args:  cobra.NoArgs,
		RunE: a.run(func(cmd *cobra.Command, args []string) error {
			return a.runWeb(cmd.Context(), rotate, false, cmd.OutOrStdout())
		}),
	}
	token.Flags().BoolVar(&rotate, "rotate", false, "end every dashboard session and unused link first")
	cmd.AddCommand(token)
	return cmd
}

func (a *app) runWeb(ctx context.Context, rotate, open bool, out io.Writer) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	l, err := c.Web(ctx, rotate)
	if err != nil {
		return err
	}
	if l.Started {
		fmt.Fprintf(out, "started the web dashboard at %s (until the daemon stops; web.enabled starts it with the daemon)\n", l.URL)
	} else {
		fmt.Fprintf(out, "web dashboard: %s\n", l.URL)
	}
	if rotate {
		fmt.Fprintln(out, "every browser was signed out")
	}
	fmt.Fprintf(out, "sign in (once, within 15 minutes): %s\n", l.LoginURL)
	if open {
		if err := spawn.OpenURL(l.LoginURL, a.env.Getenv); err == nil {
			fmt.Fprintln(out, "opened in your browser")
		}
	}
	return nil
}
