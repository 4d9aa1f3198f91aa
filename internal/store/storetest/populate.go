package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/neuraphage/neuraphage-go/internal/store"
	"github.com/neuraphage/neuraphage-go/internal/task"
)

// Populate creates n tasks named t-000000, t-000001, … in s, from 32
// goroutines so that a group-committing store batches them. For benchmarks.
func Populate(tb testing.TB, s store.Store, n int) { populate(tb, s, n, false) }

// PopulateHeld is Populate with the tasks held (paused): a daemon started on
// the store dispatches none of them.
func PopulateHeld(tb testing.TB, s store.Store, n int) { populate(tb, s, n, true) }

func populate(tb testing.TB, s store.Store, n int, hold bool) {
	ctx := context.Background()
	now := time.Now()
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for i := w; i < n; i += 32 {
				t, err := task.New(task.ID(fmt.Sprintf("t-%06d", i)), task.Spec{
					Description: fmt.Sprintf("task number %d: add token expiry checks to the auth middleware", i),
					Tags:        []string{"auth", "bench"}, Priority: i % 5, Repo: "/src/repo", Engine: "native", Hold: hold,
				}, now.Add(time.Duration(i)*time.Millisecond))
				if err == nil {
					_, err = s.CreateTask(ctx, t)
				}
				if err != nil {
					tb.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
