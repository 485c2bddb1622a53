"""The citation check's tuning numbers in one place, each a setting (config.py says why)."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Settings


@dataclass(frozen=True)
class Tuning:
    """The check's tuning numbers, each a setting (config.py says why)."""

    threshold: float  # support_threshold
    hedge_share: float  # figure_hedge_share
    elsewhere_credit: float  # support_elsewhere_credit
    contradict_share: float
    prior_weight: float  # prior_work_weight
    same_form: int  # word_form_prefix
    pick: int  # quote_candidates
    figure_hit: float  # quote_figure_weight
    meaning: float  # quote_meaning_weight
    reach: int  # comparison_reach
    frame: int  # substitution_frame
    detail_idf: float
    detail_words: int
    comparative_zipf: float
    role_window: int
    role_common_zipf: float
    name_label_words: int
    substitution_zipf: float
    only_added_share: float
    detail_zipf: float
    function_zipf: float  # function_word_zipf
    denied_words: int

    @classmethod
    def from_settings(cls, settings: Settings) -> "Tuning":
        return cls(settings.support_threshold, settings.figure_hedge_share, settings.support_elsewhere_credit,
                   settings.contradict_share, settings.prior_work_weight, settings.word_form_prefix,
                   settings.quote_candidates, settings.quote_figure_weight, settings.quote_meaning_weight,
                   settings.comparison_reach, settings.substitution_frame, settings.detail_idf, settings.detail_words,
                   settings.comparative_zipf, settings.role_window, settings.role_common_zipf,
                   settings.name_label_words, settings.substitution_zipf, settings.only_added_share, settings.detail_zipf,
                   settings.function_word_zipf, settings.denied_words)
