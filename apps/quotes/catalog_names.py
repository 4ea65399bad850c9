"""Accelerator names as SkyPilot and gpuhunt publish them -> the GPU catalog's slugs.

A documented table, never a guess: a name resolves to a slug only when the name itself, the
memory the source gives, or the instance family says which part it is. Anything else is
returned unresolved with the reason in words, and the import lists it.

How a name is read (``parse_accelerator_name``):

- upper-cased and split on spaces, ``-`` and ``_``; vendor words (NVIDIA, Tesla, AMD,
  Instinct) dropped;
- a ``<n>GB`` token is the memory per GPU (SkyPilot's ``A100-80GB``);
- a form-factor token says SXM (``SXM``, ``SXM4``, ``SXM5``, ``MEGA``: GCP's A3 Mega is HGX
  H100) or PCIe / NVL (``PCIE``, ``NVL``); gpuhunt writes NVL parts as one word
  (``H100NVL``, ``H200NVL``: gpuhunt ``_internal/constraints.py`` ``KNOWN_NVIDIA_GPUS``);
- what is left is the family (``H100``, ``RTXPRO6000``, ``MI300X``).

Which variant of a family (``resolve``): the catalog variants of the family are narrowed by
the form factor (from the name, else from the instance: ``INSTANCE_FORM_FACTORS``) and by the
memory per GPU (from the name, else the source's own memory column: SkyPilot's ``GpuInfo``
``SizeInMiB``, gpuhunt's ``gpu_memory``), within ``MEMORY_TOLERANCE``. One variant left: that
slug. None or several: unresolved.
"""

import re
from dataclasses import dataclass
from decimal import Decimal

SXM, PCIE, NVL = "SXM", "PCIe", "NVL"
UNKNOWN_GPU = "the GPU catalog has no GPU of this name"

# Memory figures differ between a datasheet, SkyPilot (GiB as MiB / 1024) and gpuhunt (GB, e.g.
# B300 as 270 against the datasheet's 288, gpuhunt constraints.py): a variant matches when the
# source's memory is within this share of the catalog's. The closest pair of variants that memory
# alone tells apart (H100 80 GB and H100 NVL 94 GB) differs by 15 %.
MEMORY_TOLERANCE = Decimal("0.08")


@dataclass(frozen=True, kw_only=True)
class Variant:
    slug: str
    form: str  # SXM, PCIe or NVL (an NVL card is a PCIe card bridged in pairs)
    memory_gb: Decimal


def _v(slug: str, form: str, memory: int) -> Variant:
    return Variant(slug=slug, form=form, memory_gb=Decimal(memory))


#: family -> the catalog's variants (slugs and memory from apps/catalog/data/gpus.csv).
FAMILIES: dict[str, tuple[Variant, ...]] = {
    "A100": (
        _v("a100-sxm4-40gb", SXM, 40), _v("a100-sxm4-80gb", SXM, 80),
        _v("a100-pcie-40gb", PCIE, 40), _v("a100-pcie-80gb", PCIE, 80),
    ),
    "H100": (
        _v("h100-sxm5-80gb", SXM, 80), _v("h100-pcie-80gb", PCIE, 80),
        _v("h100-nvl-94gb", NVL, 94),
    ),
    "H200": (_v("h200-sxm-141gb", SXM, 141), _v("h200-nvl-141gb", NVL, 141)),
    "B200": (_v("b200-sxm-180gb", SXM, 180),),
    "GB200": (_v("gb200-nvl72-186gb", SXM, 186),),
    "B300": (_v("b300-sxm-288gb", SXM, 288),),
    "GB300": (_v("gb300-nvl72-288gb", SXM, 288),),
    "L4": (_v("l4-24gb", PCIE, 24),),
    "L40S": (_v("l40s-48gb", PCIE, 48),),
    "RTX4090": (_v("rtx-4090-24gb", PCIE, 24),),
    "RTX5090": (_v("rtx-5090-32gb", PCIE, 32),),
    "RTXPRO6000": (_v("rtx-pro-6000-96gb", PCIE, 96),),
    "MI300X": (_v("mi300x-192gb", SXM, 192),),
    "MI325X": (_v("mi325x-256gb", SXM, 256),),
    "MI355X": (_v("mi355x-288gb", SXM, 288),),
}  # fmt: skip

#: Names the sources spell differently for the same family.
ALIASES = {"RTXPRO6000BLACKWELL": "RTXPRO6000", "RTXPRO6000SE": "RTXPRO6000"}

#: Where a bare family name has one meaning in both sources' naming: gpuhunt names the NVL
#: H200 ``H200NVL`` (constraints.py), so a bare ``H200`` is the SXM part (AWS p5e/p5en, GCP
#: a3-ultragpu, Azure ND H200 v5 are all HGX H200).
DEFAULT_FORM = {"H200": SXM}

#: SkyPilot's own convention: the 80 GB A100 is named ``A100-80GB`` and a bare ``A100`` is the
#: 40 GB part (sky/catalog/data_fetchers/fetch_gcp.py ``_gpu_info_from_name``; AWS p4d).
DEFAULT_MEMORY_GB = {"A100": Decimal(40)}

#: Instance families whose GPUs are one form factor, from the clouds' instance documentation:
#: AWS p4d/p4de (A100 SXM4), p5/p5e/p5en (H100/H200 SXM), p6 (B200/B300); GCP a2 (A100 SXM4),
#: a3 (H100/H200 SXM), a4 (B200); Azure ND A100 v4 / ND H100 v5 / ND H200 v5 (SXM) and
#: NC A100 v4 (PCIe), NC H100 v5 (H100 NVL); and names that say it themselves (Lambda's
#: ``gpu_8x_h100_sxm5``, ``gpu_1x_h100_pcie``, RunPod's ``H100 PCIe`` / ``H100 NVL``).
INSTANCE_FORM_FACTORS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), form)
    for pattern, form in (
        (r"^p4de?\.", SXM),
        (r"^p5(e|en)?\.", SXM),
        (r"^p6(e)?-", SXM),
        (r"^a[234]-(high|mega|ultra|edge)gpu", SXM),
        (r"^Standard_ND\d+[a-z]*_(A100|H100|H200|MI300X)_v\d", SXM),
        (r"^Standard_ND96asr_v4$", SXM),  # ND A100 v4: HGX A100 40 GB
        (r"^Standard_NC\d+[a-z]*_A100_v4", PCIE),
        (r"^Standard_NC\d+[a-z]*_H100_v5", NVL),
        (r"sxm", SXM),
        (r"nvl", NVL),
        (r"pcie", PCIE),
    )
)

_FORM_TOKENS = {"SXM": SXM, "SXM4": SXM, "SXM5": SXM, "SXM6": SXM, "MEGA": SXM, "HGX": SXM,
                "PCIE": PCIE, "NVL": NVL}  # fmt: skip
_VENDOR_WORDS = {"NVIDIA", "TESLA", "AMD", "INSTINCT", "GEFORCE"}
_MEMORY_TOKEN = re.compile(r"(\d{1,4})GB")


@dataclass(frozen=True, kw_only=True)
class ParsedName:
    family: str
    form: str | None
    memory_gb: Decimal | None


def parse_accelerator_name(name: str) -> ParsedName:
    tokens = [t for t in re.split(r"[\s\-_]+", name.strip().upper()) if t]
    form: str | None = None
    memory: Decimal | None = None
    rest: list[str] = []
    for token in tokens:
        if token in _VENDOR_WORDS:
            continue
        if token in _FORM_TOKENS:
            form = _FORM_TOKENS[token]
            continue
        match = _MEMORY_TOKEN.fullmatch(token)
        if match:
            memory = Decimal(match.group(1))
            continue
        rest.append(token)
    family = "".join(rest)
    if family.endswith("NVL") and family[:-3] in FAMILIES:
        family, form = family[:-3], NVL
    family = ALIASES.get(family, family)
    return ParsedName(family=family, form=form, memory_gb=memory)


def instance_form_factor(instance: str) -> str | None:
    for pattern, form in INSTANCE_FORM_FACTORS:
        if pattern.search(instance):
            return form
    return None


@dataclass(frozen=True, kw_only=True)
class Resolution:
    slug: str | None
    reason: str = ""  # why not, in words, when slug is None
    known_family: bool = False  # False: the catalog has no GPU of this name at all


def _memory_matches(variant: Variant, memory: Decimal) -> bool:
    return abs(variant.memory_gb - memory) <= variant.memory_gb * MEMORY_TOLERANCE


def resolve(
    name: str, *, memory_gb: Decimal | None = None, instance: str = "", use_defaults: bool = True
) -> Resolution:
    """The catalog slug for one accelerator name, or why there is none.

    ``memory_gb``: the source's memory per GPU, if it gives one; ``instance``: the instance type
    or host VM type; ``use_defaults``: apply ``DEFAULT_FORM`` / ``DEFAULT_MEMORY_GB`` (the
    naming conventions both sources follow)."""
    parsed = parse_accelerator_name(name)
    variants = FAMILIES.get(parsed.family)
    if not variants:
        return Resolution(slug=None, reason=UNKNOWN_GPU)
    form = parsed.form or instance_form_factor(instance)
    memory = parsed.memory_gb or memory_gb
    if use_defaults:
        form = form or DEFAULT_FORM.get(parsed.family)
        memory = memory or DEFAULT_MEMORY_GB.get(parsed.family)
    left = list(variants)
    if form is not None and len({v.form for v in left}) > 1:
        left = [v for v in left if v.form == form]
    if memory is not None:
        left = [v for v in left if _memory_matches(v, memory)]
    if len(left) == 1:
        return Resolution(slug=left[0].slug, known_family=True)
    if not left:
        said = ", ".join(x for x in (form, f"{memory} GB" if memory else None) if x)
        return Resolution(
            slug=None, known_family=True,
            reason=f"no {parsed.family} in the GPU catalog matches {said}",
        )  # fmt: skip
    options = " or ".join(v.slug for v in left)
    forms = {v.form for v in left}
    if form is None and len(forms) > 1:
        missing = (
            f"whether it is {' or '.join(sorted(forms))} (neither the name nor the instance says)"
        )
    else:
        missing = "the memory per GPU that tells them apart"
    return Resolution(
        slug=None, known_family=True, reason=f"could be {options}: the file does not say {missing}"
    )
