/**
 * The handler work in flight (event handlers, tool calls, every host → child request), so shutdown
 * can wait for it — within a bound. Upstream waits forever, which lets one hung handler hold the
 * shutdown ack hostage until the host's SIGKILL; here the wait ends at the bound, the stragglers
 * are abandoned (their requests answered with an error, their signals aborted) and named in the log.
 */
import { isThenable } from "@nexo/wire";

/** What a running handler can observe of its own lifecycle. */
export interface TaskHandle {
  /** Aborted when the host goes away or shutdown abandons the task. */
  readonly signal: AbortSignal;
}

/**
 * One tracked task, also the handle its work sees. A class, so that the per-call cost is one object
 * (the signal getter lives on the prototype); the AbortController is created only if the work reads
 * its signal, and the label only when someone asks for it (logs, shutdown): both were measurable
 * costs on the tool.invoke hot path (docs/performance.md).
 */
class Task implements TaskHandle {
  settle: ((error: Error) => void) | undefined = undefined;
  controller: AbortController | undefined = undefined;
  abortedWith: Error | undefined = undefined;

  constructor(private readonly name: string | (() => string)) {}

  get label(): string {
    return typeof this.name === "string" ? this.name : this.name();
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith);
    }
    return this.controller.signal;
  }
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
   * abandonment error if the task is abandoned first. `label` names the task in logs; a function
   * is called only when the name is needed.
   */
  run<T>(label: string | (() => string), work: (handle: TaskHandle) => T | Promise<T>): Promise<T> {
    const task = new Task(label);
    this.tasks.add(task);
    return new Promise<T>((resolve, reject) => {
      task.settle = reject;
      let outcome: T | Promise<T>;
      try {
        outcome = work(task);
      } catch (error) {
        this.remove(task);
        reject(error);
        return;
      }
      if (!isThenable(outcome)) {
        this.remove(task);
        resolve(outcome);
        return;
      }
      this.follow(task, outcome, resolve, reject);
    });
  }

  /**
   * Like `run`, but a `work` that finishes synchronously gives its value (or throws its error)
   * synchronously: no promise is built. The request path uses it so that a synchronous handler's
   * reply is written in the same callback that read the request, with no microtask hop between
   * (docs/performance.md, plugin tool.invoke). Work that returns a promise is tracked as by `run`.
   */
  call<T>(label: string | (() => string), work: (handle: TaskHandle) => T | Promise<T>): T | Promise<T> {
    const task = new Task(label);
    this.tasks.add(task);
    let outcome: T | Promise<T>;
    try {
      outcome = work(task);
    } catch (error) {
      this.remove(task);
      throw error;
    }
    if (!isThenable(outcome)) {
      this.remove(task);
      return outcome;
    }
    return this.track(task, outcome);
  }

  private track<T>(task: Task, outcome: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      task.settle = reject;
      this.follow(task, outcome, resolve, reject);
    });
  }

  /** Settles a task's promise with its work's, the task untracked first. */
  private follow<T>(
    task: Task,
    outcome: Promise<T>,
    resolve: (value: T) => void,
    reject: (error: unknown) => void,
  ): void {
    outcome.then(
      (value) => {
        this.remove(task);
        resolve(value);
      },
      (error: unknown) => {
        this.remove(task);
        reject(error);
      },
    );
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
    // Checked first: at one call in flight every call empties the set, and splice builds an array.
    if (this.tasks.size === 0 && this.idleWaiters.length > 0)
      for (const wake of this.idleWaiters.splice(0)) wake();
  }
}

function abortTask(task: Task, reason: Error): void {
  if (task.abortedWith !== undefined) return;
  task.abortedWith = reason;
  task.controller?.abort(reason);
}
