package tui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"

	"github.com/neuraphage/neuraphage-go/internal/event"
)

// Run shows the dashboard on the terminal until the user quits or ctx
// ends. It opens the live stream first, so nothing that happens while the
// fleet loads is missed; one goroutine reads the stream and ends, joined,
// when Run returns.
func Run(ctx context.Context, b Backend, o Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := b.Watch(ctx)
	if err != nil {
		return err
	}
	ch := make(chan event.Event, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		for {
			e, err := st.Next()
			if err != nil {
				return
			}
			select {
			case ch <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	m := New(ctx, b, o)
	m.events = ch
	_, err = tea.NewProgram(m, tea.WithContext(ctx)).Run()
	cancel()
	st.Close()
	<-done
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}
