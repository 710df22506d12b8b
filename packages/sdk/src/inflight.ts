/**
 * The handler work in flight (event handlers, tool calls, every host → child request), so shutdown
 * can wait for it — within a bound. Upstream waits forever, which lets one hung handler hold the
 * shutdown ack hostage until the host's SIGKILL; here the wait ends at the bound, the stragglers
 * are abandoned (their requests answered with an error, their signals aborted) and named in the log.
 */

/** What a running handler can observe of its own lifecycle. */
export interface TaskHandle {
  /** Aborted when the host goes away or shutdown abandons the task. */
  readonly signal: AbortSignal;
}

interface Task {
  readonly label: string;
  settle: ((error: Error) => void) | undefined;
  controller: AbortController | undefined;
  abortedWith: Error | undefined;
}

export class InflightTasks {
  private readonly tasks = new Set<Task>();
  private idleWaiters: Array<() => void> = [];

  get size(): number {
    return this.tasks.size;
  }

  labels(): string[] {
    return [...this.tasks].map((task) => task.label);
  }

  /**
   * Runs `work` as a tracked task. The returned promise settles with the work, or rejects with the
   * abandonment error if the task is abandoned first.
   */
  run<T>(label: string, work: (handle: TaskHandle) => T | Promise<T>): Promise<T> {
    const task: Task = { label, settle: undefined, controller: undefined, abortedWith: undefined };
    // The AbortController is created only if the handler reads its signal: one per call is a
    // measurable cost on the tool.invoke hot path.
    const handle: TaskHandle = {
      get signal() {
        if (task.controller === undefined) {
          task.controller = new AbortController();
          if (task.abortedWith !== undefined) task.controller.abort(task.abortedWith);
        }
        return task.controller.signal;
      },
    };
    this.tasks.add(task);
    return new Promise<T>((resolve, reject) => {
      task.settle = reject;
      const finish = () => this.remove(task);
      let outcome: T | Promise<T>;
      try {
        outcome = work(handle);
      } catch (error) {
        finish();
        reject(error);
        return;
      }
      Promise.resolve(outcome).then(
        (value) => {
          finish();
          resolve(value);
        },
        (error: unknown) => {
          finish();
          reject(error);
        },
      );
    });
  }

  /** Aborts every task's signal (the host is gone) but keeps waiting for them. */
  abortAll(reason: Error): void {
    for (const task of this.tasks) abortTask(task, reason);
  }

  /**
   * Waits until no task is left or `timeoutMs` has passed. Returns the labels of the tasks still
   * running at the deadline (empty when everything finished).
   */
  async drain(timeoutMs: number): Promise<string[]> {
    if (this.tasks.size === 0) return [];
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([idle, deadline]);
    clearTimeout(timer);
    return this.labels();
  }

  /**
   * Gives up on every remaining task: its signal is aborted and its promise rejects with `error`
   * (so a request gets an error reply). Whatever the work does later is ignored.
   */
  abandon(error: Error): string[] {
    const labels = this.labels();
    for (const task of [...this.tasks]) {
      abortTask(task, error);
      this.remove(task);
      task.settle?.(error);
    }
    return labels;
  }

  private remove(task: Task): void {
    if (!this.tasks.delete(task)) return;
    if (this.tasks.size === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }
}

function abortTask(task: Task, reason: Error): void {
  if (task.abortedWith !== undefined) return;
  task.abortedWith = reason;
  task.controller?.abort(reason);
}
