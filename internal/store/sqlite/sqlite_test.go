package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/neuraphage/neuraphage-go/internal/event"
	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/store/sqlite"
	"github.com/neuraphage/neuraphage-go/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T, dir string, publish func(...event.Event)) store.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(dir, "neuraphage.db"), sqlite.Options{Publish: publish})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}
