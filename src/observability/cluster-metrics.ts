/**
 * Metrics of the scale-out parts (Redis, live status), registered on the gateway's registry.
 * Labels are fixed component names: never a key, a txRef or a caller.
 */
import { Counter, Gauge } from 'prom-client';
import type { LiveObserver } from '../live/hub.ts';
import type { BusinessLabel, GatewayMetrics } from './metrics.ts';

export class ClusterMetrics {
  /** Only with CACHE_URL: without Redis there is nothing to be up. */
  readonly redisUp: Gauge | undefined;
  readonly redisErrors: Counter<'component'>;
  readonly livePollers: Gauge;
  readonly liveSubscribers: Gauge;
  readonly livePolls: Counter<'outcome'>;
  readonly liveRejected: Counter<'reason'>;
  readonly #metrics: GatewayMetrics;

  constructor(metrics: GatewayMetrics, withRedis: boolean) {
    this.#metrics = metrics;
    const registers = [metrics.registry];
    this.redisUp = withRedis
      ? new Gauge({
          name: 'gateway_redis_up',
          help: 'Whether the Redis of CACHE_URL is connected (1) or not (0).',
          registers,
        })
      : undefined;
    this.redisErrors = new Counter({
      name: 'gateway_redis_errors_total',
      help: 'Failed Redis operations, by component (cache, flight, live, rate_limit); each was served without Redis.',
      labelNames: ['component'] as const,
      registers,
    });
    this.livePollers = new Gauge({
      name: 'gateway_live_pollers',
      help: 'Records (transactions, KYC users) whose live status this process polls now.',
      registers,
    });
    this.liveSubscribers = new Gauge({
      name: 'gateway_live_subscribers',
      help: 'transactionStatus and kycStatus subscriptions open on this process.',
      registers,
    });
    this.livePolls = new Counter({
      name: 'gateway_live_polls_total',
      help: 'Live status polls of the upstreams made by this process, by outcome.',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.liveRejected = new Counter({
      name: 'gateway_live_messages_rejected_total',
      help: 'Messages between replicas dropped: not sealed with a known cache key for their channel (unauthenticated), of a wrong shape (malformed), or sent more than a minute away from now (stale).',
      labelNames: ['reason'] as const,
      registers,
    });
  }

  /** The live hub's observer, of one business (its label on the push delay). */
  liveObserver(business: BusinessLabel): LiveObserver {
    return {
      subscribers: (delta) => this.liveSubscribers.inc(delta),
      pollers: (delta) => this.livePollers.inc(delta),
      poll: (outcome) => this.livePolls.inc({ outcome }),
      pushed: (source, delayMs, count) => {
        for (let i = 0; i < count; i += 1) {
          this.#metrics.webhookPushDelay.observe({ source, ...business }, delayMs / 1000);
        }
      },
    };
  }
}
