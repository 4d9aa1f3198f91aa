//go:build tools

// Temporary: pins dependencies until code imports them. Remove when unused.
package deps
import (
 _ "github.com/spf13/cobra"
 _ "modernc.org/sqlite"
 _ "gopkg.in/yaml.v3"
 _ "github.com/rogpeppe/go-internal/testscript"
 _ "github.com/google/go-cmp/cmp"
 _ "golang.org/x/sync/errgroup"
 _ "github.com/anthropics/anthropic-sdk-go"
 _ "github.com/openai/openai-go/v3"
)
