"""Which way a word says a quantity goes: up ("increases", "faster", "a 6.92x improvement") or down ("reduces",
"lower", "an 11.96x reduction"). General English, not fitted to a corpus; the check marks read a claim's direction
against its quote's by these (`polarity`), and a question's "cut down the number of ..." is a change, not a count
asked (`specifics`)."""

from __future__ import annotations

UP = {"more", "higher", "greater", "larger", "bigger", "increase", "increases", "increased", "increasing", "improve",
      "improves", "improved", "improving", "exceed", "exceeds", "exceeded", "exceeding", "outperform", "outperforms",
      "outperformed", "surpass", "surpasses", "surpassed", "surpassing", "better", "stronger", "strengthen",
      "strengthens", "boost", "boosts", "enhance", "enhances", "enhanced", "faster", "upper", "above", "raise", "raises",
      "maximize", "maximizes", "longer", "gain", "gains", "rise", "rises", "best", "most", "highest", "superior",
      "high", "large", "strong", "fast", "long", "many", "accelerate", "accelerates", "accelerated", "accelerating",
      "amplify", "amplifies", "amplified", "amplifying", "improvement", "improvements", "increment", "increments",
      "growth", "speedup", "speedups"}  # the nouns say it as the verbs do: "6.92x improvement in hit rate"
DOWN = {"less", "fewer", "lower", "smaller", "decrease", "decreases", "decreased", "reduce", "reduces", "reduced",
        "reducing", "degrade", "degrades", "degraded", "worsen", "worsens", "underperform", "underperforms", "worse",
        "weaker", "weaken", "weakens", "slower", "below", "minimize", "minimizes", "shorten", "shortens", "shorter",
        "hurt", "hurts", "drop", "drops", "decline", "declines", "lag", "lags", "least", "lowest", "worst", "inferior",
        "low", "small", "weak", "slow", "short", "few", "slows", "slowed", "slowing", "decelerate", "decelerates",
        "diminish", "diminishes", "diminished", "diminishing", "lessen", "lessens", "lessened", "reduction", "reductions",
        "degradation", "degradations", "slowdown", "slowdowns", "cut", "cuts"}  # "11.96x reduction in latency"
