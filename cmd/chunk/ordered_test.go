package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestRunOrdered(t *testing.T) {
	jobs := make([]int, 200)
	for i := range jobs {
		jobs[i] = i
	}
	process := func(j int) int {
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
		return j * j
	}
	for _, workers := range []int{1, 3, 8} {
		var got []int
		err := runOrdered(context.Background(), jobs, workers, process, func(j, r int) error {
			if r != j*j {
				t.Errorf("result of job %d = %d", j, r)
			}
			got = append(got, j)
			return nil
		})
		if err != nil || !slices.Equal(got, jobs) {
			t.Errorf("runOrdered(workers=%d) = %v, emitted %d jobs out of order or missing", workers, err, len(got))
		}
	}

	stop := errors.New("stop")
	n := 0
	err := runOrdered(context.Background(), jobs, 4, process, func(j, _ int) error {
		n++
		if j == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 11 {
		t.Errorf("runOrdered with an emit error = %v after %d emits, want stop after 11", err, n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	err = runOrdered(ctx, jobs, 2, process, func(j, _ int) error {
		if j == 5 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("runOrdered with a cancelled context = %v, want context.Canceled", err)
	}
}
