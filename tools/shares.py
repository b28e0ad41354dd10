"""Time shares for campaigns whose parts run one after another, each a
little past its share (an engine's start-up and exit, a coverage pass):
./mmfuzz run's components (tools/campaign/campaign.py) and the targets of
./mmfuzz fuzz all (tools/verbs/fuzz).  Standard library only."""


def expected_overrun(seen, prior):
    """What the next part of a kind is expected to run past its share: the
    mean of @seen, the overruns of that kind's parts so far; @prior before
    the first has run."""
    return sum(seen) / len(seen) if seen else prior


def share(left, weight, rest, minimum):
    """The seconds of a part of @weight: its weight's part of @left, less
    what @rest - [(weight, expected overrun)] of the parts still to run,
    this one first - are expected to run past their shares; at least
    @minimum.  Without the reserve the overruns came out of the last parts'
    time: in a 300 s ./mmfuzz run, sched fuzzed 4.5 s where buddy had
    18.7 s."""
    reserve = sum(e for _, e in rest)
    return max(minimum, (left - reserve) * weight / sum(w for w, _ in rest))
