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
	return run(ctx, b, o, nil)
}

// run is Run with the program's model wrapped (nil: as it is) and more
// options for the program; the benchmarks count frames with them.
func run(ctx context.Context, b Backend, o Options, wrap func(*Model) tea.Model, opts ...tea.ProgramOption) error {
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
	var top tea.Model = m
	if wrap != nil {
		top = wrap(m)
	}
	_, err = tea.NewProgram(top, append([]tea.ProgramOption{tea.WithContext(ctx)}, opts...)...).Run()
	cancel()
	st.Close()
	<-done
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}
