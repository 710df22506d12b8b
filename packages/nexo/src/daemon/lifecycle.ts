/**
 * The daemon is a list of components, each with a name, a start and a stop. They start one after
 * another in list order and stop in the reverse order, so whatever a component uses has started
 * before it and is still there while it stops.
 *
 * A component that fails to start stops the whole start-up: the components already started are
 * stopped, newest first, and the failure comes back as a `ComponentStartError` naming the
 * component, so the operator reads "could not start http: ..." instead of a bare EADDRINUSE, and no
 * plugin process or open port outlives a daemon that never became ready.
 */

export interface Component {
  /** Names the component in logs and in a start-up failure ("http", "plugins", …). */
  readonly name: string;
  start(): Promise<void> | void;
  /** Releases what `start` acquired. Called only after a successful start, at most once. */
  stop(reason: string): Promise<void> | void;
}

/** A component could not start; every component started before it has been stopped again. */
export class ComponentStartError extends Error {
  override readonly name = "ComponentStartError";
  /** The component's name. */
  readonly component: string;

  constructor(component: string, cause: unknown) {
    super(`could not start ${component}: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
    this.component = component;
  }
}

export interface LifecycleLogger {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

export type LifecycleState = "idle" | "starting" | "running" | "stopping" | "stopped";

export class Lifecycle {
  private readonly started: Component[] = [];
  private current: LifecycleState = "idle";
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private stopReason: string | undefined;

  constructor(
    private readonly components: readonly Component[],
    private readonly logger: LifecycleLogger,
  ) {
    const names = new Set<string>();
    for (const { name } of components) {
      if (names.has(name)) throw new Error(`two components are named "${name}"`);
      names.add(name);
    }
  }

  get state(): LifecycleState {
    return this.current;
  }

  /** The components' names in start order. */
  names(): string[] {
    return this.components.map((component) => component.name);
  }

  /** Starts every component in order; on a failure, stops the started ones and throws ComponentStartError. */
  start(): Promise<void> {
    if (this.starting !== undefined) throw new Error("the components were already started");
    this.starting = this.startAll();
    return this.starting;
  }

  /**
   * Stops the started components, newest first. A component whose stop fails is logged and the
   * others still stop. Called during start-up, the component starting now may finish, then the
   * start-up unwinds (its `start()` rejects) and this resolves once all is stopped. Idempotent.
   */
  stop(reason: string): Promise<void> {
    this.stopping ??= this.stopAll(reason);
    return this.stopping;
  }

  private async startAll(): Promise<void> {
    this.current = "starting";
    for (const component of this.components) {
      let failure: ComponentStartError | undefined;
      if (this.stopReason !== undefined) {
        const why = `asked to stop (${this.stopReason}) before it started`;
        failure = new ComponentStartError(component.name, new Error(why));
      } else {
        try {
          await component.start();
        } catch (error) {
          failure = new ComponentStartError(component.name, error);
          this.logger.error(
            { component: component.name, err: failure.message },
            "a component failed to start; stopping the ones already started",
          );
        }
      }
      if (failure !== undefined) {
        await this.stopStarted(this.stopReason ?? `${component.name} failed to start`);
        this.current = "stopped";
        throw failure;
      }
      this.started.push(component);
      this.logger.debug({ component: component.name }, "component started");
    }
    this.current = "running";
  }

  private async stopAll(reason: string): Promise<void> {
    this.stopReason = reason;
    // A start-up in progress sees the reason after its current component and unwinds by itself.
    await this.starting?.catch(() => undefined);
    if (this.current === "stopped") return;
    this.current = "stopping";
    await this.stopStarted(reason);
    this.current = "stopped";
  }

  private async stopStarted(reason: string): Promise<void> {
    for (const component of this.started.splice(0).reverse()) {
      try {
        await component.stop(reason);
        this.logger.debug({ component: component.name }, "component stopped");
      } catch (error) {
        this.logger.error(
          { component: component.name, err: error instanceof Error ? error.message : String(error) },
          "a component failed to stop",
        );
      }
    }
  }
}

/**
 * A component that makes one thing on start (the store, the broker, …) and hands it out as
 * `value`; the thing stays readable after stop, for whoever still holds the daemon.
 */
export class Part<T> implements Component {
  private made: { value: T } | undefined;

  constructor(
    readonly name: string,
    private readonly hooks: {
      start: () => Promise<T> | T;
      stop?: (value: T, reason: string) => Promise<void> | void;
    },
  ) {}

  /** The thing; throws while the component has not started. */
  get value(): T {
    if (this.made === undefined) throw new Error(`${this.name} has not started`);
    return this.made.value;
  }

  get ready(): boolean {
    return this.made !== undefined;
  }

  async start(): Promise<void> {
    this.made = { value: await this.hooks.start() };
  }

  async stop(reason: string): Promise<void> {
    if (this.made !== undefined) await this.hooks.stop?.(this.made.value, reason);
  }
}
