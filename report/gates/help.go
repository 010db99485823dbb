package gates

// CommandHelp is `llmbench gate --help`'s text: what a gate expression
// looks like and how each of its three outcomes is decided, which is this
// package's to say (docs/decisions/0034).
const CommandHelp = `Evaluates every gate the run was run with (RUN_DIR/scenario.yaml's gates.thresholds and the
--threshold expressions given to llmbench run, recorded in run.json) and every --threshold given here
against the run, and prints one line per gate. RUN_DIR may be a trial set (llmbench run --repeat N).
Expressions look like

  client.ttft.p99 < 500ms
  client.requests.failed == 0
  client.ttft.p99 < baseline * 1.10
  client.ttft.p99 regression < 10%

Every gate has three outcomes (docs/decisions/0034). A latency quantile is decided by its 95%
order-statistic interval over the run's requests, a mean by its t interval, an error rate or goodput
fraction by its Wilson interval, a server quantile by its histogram bucket, a count exactly: pass
when the whole interval meets the limit, fail when none of it does, inconclusive when it straddles
(a p99 from 50 requests near its bound). A regression (and baseline * F, baseline ± V) is decided by
a bootstrap over runs, then over requests within each drawn run; with a single run on a side it is
widened by the metric's noise floor (learned with llmbench noise, else a default), and fails only
when the widened interval lies wholly beyond the allowed regression. Every gate of a run that is not
valid (health.valid false: failures over the bound, a delayed host, a saturated client, an engine
restart ...) is inconclusive, naming the state; gates on health.* and on client.requests.*,
client.errors.* and client.error_rate still decide.

--baseline takes a run directory, a trial set, a directory of baseline runs, or a summary.json;
given several times, its runs form the baseline's history. Without it, the baseline the run was
given is used, where it still is; a --baseline that no gate uses, or a --junit with no gate, is a
usage error. --noise names a noise file (default: $LLMBENCH_NOISE, else
~/.config/llmbench/noise.json when it has floors for the baseline's scenario and host).

Exit codes: 0 every gate passed; 2 usage; 3 a gate failed or could not be evaluated (a metric the
run lacks); 4 no gate failed, but some were inconclusive (each line says what would decide it:
more requests, --repeat N, more baseline runs, a learned noise floor, a quieter host). 3 dominates 4.
--metrics lists the metric names.`
