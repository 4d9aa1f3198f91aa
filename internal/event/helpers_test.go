package event

import "github.com/neuraphage/neuraphage-go/internal/task"

func taskID(s string) task.ID { return task.ID(s) }
