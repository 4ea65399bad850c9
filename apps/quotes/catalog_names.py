"""Accelerator names as SkyPilot, gpuhunt and the providers publish them -> the GPU catalog's slugs.

A documented table, never a guess: a name resolves to a slug only when the name itself, the
memory the source gives, or the instance family says which part it is. Anything else is
returned unresolved with the reason in words, and the import lists it.

How a name is read (``parse_accelerator_name``):

- upper-cased and split on spaces, ``-`` and ``_``; vendor words (NVIDIA, Tesla, AMD,
  Instinct, GeForce) dropped;
- a ``<n>GB`` token is the memory per GPU (SkyPilot's ``A100-80GB``, RunPod's
  ``H100-80GB-HBM3``);
- a form-factor token says SXM (``SXM``, ``SXM4``, ``SXM5``, ``MEGA``: GCP's A3 Mega is HGX
  H100) or PCIe / NVL (``PCIE``, ``NVL``); gpuhunt writes NVL parts as one word
  (``H100NVL``, ``H200NVL``: gpuhunt ``_internal/constraints.py`` ``KNOWN_NVIDIA_GPUS``);
- a memory-type token (``HBM3``, ``HBM2E``, ``HBM3E``, ``GDDR6``) narrows the variants by the
  catalog's ``memory_type``: RunPod's ``H100-80GB-HBM3`` is the SXM part (the H100 PCIe card
  is HBM2e, the 94 GB NVL card HBM3; NVIDIA H100 datasheet);
- what is left is the family (``H100``, ``RTXPRO6000``, ``MI300X``, ``RTX6000ADA``).

Which variant of a family (``resolve``): the catalog variants of the family are narrowed by
the form factor (from the name, else from the instance: ``INSTANCE_FORM_FACTORS``, else from
the source's own GPU name, SkyPilot's ``GpuInfo`` ``Name``), the memory type, and the memory per
GPU (from the name, else the source's own memory column), within ``MEMORY_TOLERANCE``. One
variant left: that slug. None or several: unresolved.

Memory is compared in one unit, GB (10**9 bytes, as the catalog's ``memory_gb``): a source's
MiB figure is converted (``memory_from_mib``), with SkyPilot's convention that a nominal
"80 GB" part is written 81920 MiB read as 80 GB too, so Verda's B300 (268288 MiB = 281 GB)
matches the catalog's 288 GB and Lambda's A100 (81920 MiB) its 80 GB.
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
    memory_type: str = ""  # as apps/catalog/data/gpus.csv writes it, upper-cased


def _v(slug: str, form: str, memory: int, memory_type: str = "") -> Variant:
    return Variant(slug=slug, form=form, memory_gb=Decimal(memory), memory_type=memory_type)


#: family -> the catalog's variants (slugs, memory and memory type from
#: apps/catalog/data/gpus.csv).
FAMILIES: dict[str, tuple[Variant, ...]] = {
    "A100": (
        _v("a100-sxm4-40gb", SXM, 40, "HBM2"), _v("a100-sxm4-80gb", SXM, 80, "HBM2E"),
        _v("a100-pcie-40gb", PCIE, 40, "HBM2"), _v("a100-pcie-80gb", PCIE, 80, "HBM2E"),
    ),
    "H100": (
        _v("h100-sxm5-80gb", SXM, 80, "HBM3"), _v("h100-pcie-80gb", PCIE, 80, "HBM2E"),
        _v("h100-nvl-94gb", NVL, 94, "HBM3"),
    ),
    "H200": (_v("h200-sxm-141gb", SXM, 141, "HBM3E"), _v("h200-nvl-141gb", NVL, 141, "HBM3E")),
    "GH200": (_v("gh200-96gb", SXM, 96, "HBM3"),),
    "B200": (_v("b200-sxm-180gb", SXM, 180),),
    "GB200": (_v("gb200-nvl72-186gb", SXM, 186),),
    "B300": (_v("b300-sxm-288gb", SXM, 288),),
    "GB300": (_v("gb300-nvl72-288gb", SXM, 288),),
    "V100": (_v("v100-sxm2-16gb", SXM, 16), _v("v100-sxm2-32gb", SXM, 32)),
    "T4": (_v("t4-16gb", PCIE, 16),),
    "A10": (_v("a10-24gb", PCIE, 24),),
    "A10G": (_v("a10g-24gb", PCIE, 24),),
    "A40": (_v("a40-48gb", PCIE, 48),),
    "RTXA6000": (_v("rtx-a6000-48gb", PCIE, 48),),
    "L4": (_v("l4-24gb", PCIE, 24),),
    "L40": (_v("l40-48gb", PCIE, 48),),
    "L40S": (_v("l40s-48gb", PCIE, 48),),
    "RTX6000ADA": (_v("rtx-6000-ada-48gb", PCIE, 48),),
    "RTX4090": (_v("rtx-4090-24gb", PCIE, 24),),
    "RTX5090": (_v("rtx-5090-32gb", PCIE, 32),),
    "RTXPRO6000": (_v("rtx-pro-6000-96gb", PCIE, 96),),
    "MI300X": (_v("mi300x-192gb", SXM, 192),),
    "MI325X": (_v("mi325x-256gb", SXM, 256),),
    "MI355X": (_v("mi355x-288gb", SXM, 288),),
}  # fmt: skip

#: Names the sources spell differently for the same family: gpuhunt and RunPod write
#: ``RTXPRO6000`` / ``RTX PRO 6000 Blackwell``, Lambda (SkyPilot) ``A6000`` for the RTX A6000,
#: RunPod ``RTX 6000 Ada Generation``. Lambda's bare ``RTX6000`` is the Turing Quadro RTX 6000
#: (24 GB), which the catalog lacks: it stays unknown rather than becoming the 48 GB Ada part.
ALIASES = {
    "RTXPRO6000BLACKWELL": "RTXPRO6000",
    "RTXPRO6000SE": "RTXPRO6000",
    "RTXPRO6000BLACKWELLSERVEREDITION": "RTXPRO6000",
    "A6000": "RTXA6000",
    "RTX6000ADAGENERATION": "RTX6000ADA",
    "GH200GRACEHOPPER": "GH200",
}

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

_FORM_TOKENS = {"SXM": SXM, "SXM2": SXM, "SXM4": SXM, "SXM5": SXM, "SXM6": SXM, "MEGA": SXM,
                "HGX": SXM, "PCIE": PCIE, "NVL": NVL}  # fmt: skip
_MEMORY_TYPE_TOKENS = {"HBM2", "HBM2E", "HBM3", "HBM3E", "GDDR6", "GDDR6X", "GDDR7"}
_VENDOR_WORDS = {"NVIDIA", "TESLA", "AMD", "INSTINCT", "GEFORCE"}
_MEMORY_TOKEN = re.compile(r"(\d{1,4})GB")


@dataclass(frozen=True, kw_only=True)
class ParsedName:
    family: str
    form: str | None
    memory_gb: Decimal | None
    memory_type: str | None = None


def parse_accelerator_name(name: str) -> ParsedName:
    tokens = [t for t in re.split(r"[\s\-_]+", name.strip().upper()) if t]
    form: str | None = None
    memory: Decimal | None = None
    memory_type: str | None = None
    rest: list[str] = []
    for token in tokens:
        if token in _VENDOR_WORDS:
            continue
        if token in _FORM_TOKENS:
            form = _FORM_TOKENS[token]
            continue
        if token in _MEMORY_TYPE_TOKENS:
            memory_type = token
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
    return ParsedName(family=family, form=form, memory_gb=memory, memory_type=memory_type)


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


#: SkyPilot's GpuInfo ``SizeInMiB``: below this it holds GB, as RunPod's fetcher writes it
#: (``'SizeInMiB': 80`` for an 80 GB A100; skypilot-catalog catalogs/v8/runpod/vms.csv).
MIB_FIGURE_IS_GB_BELOW = 1024
MIB_PER_NOMINAL_GB = 1024
BYTES_PER_MIB = 2**20
BYTES_PER_GB = 10**9


def memory_from_mib(mib: Decimal) -> tuple[Decimal, ...]:
    """A source's per-GPU MiB figure as the GB (10**9 bytes) it may mean: the MiB converted,
    and SkyPilot's nominal reading (``80 GB`` written as 80 x 1024 MiB); a figure under 1024
    is already GB (RunPod)."""
    if mib < MIB_FIGURE_IS_GB_BELOW:
        return (mib,)
    return (mib / MIB_PER_NOMINAL_GB, mib * BYTES_PER_MIB / BYTES_PER_GB)


def _memory_matches(variant: Variant, memory: tuple[Decimal, ...]) -> bool:
    return any(abs(variant.memory_gb - m) <= variant.memory_gb * MEMORY_TOLERANCE for m in memory)


def _memory_words(memory: tuple[Decimal, ...]) -> str:
    return f"{max(memory).quantize(Decimal('0.1')).normalize():f} GB"


def resolve(
    name: str,
    *,
    memory_gb: Decimal | tuple[Decimal, ...] | None = None,
    instance: str = "",
    source_name: str = "",
    use_defaults: bool = True,
) -> Resolution:
    """The catalog slug for one accelerator name, or why there is none.

    ``memory_gb``: the source's memory per GPU in GB, if it gives one (a tuple: the readings it
    may mean, ``memory_from_mib``); ``instance``: the instance type or host VM type;
    ``source_name``: the source's own longer name for the GPU (SkyPilot's GpuInfo ``Name``:
    RunPod's ``H100 PCIe`` for an accelerator it calls ``H100``); ``use_defaults``: apply
    ``DEFAULT_FORM`` / ``DEFAULT_MEMORY_GB`` (the naming conventions both sources follow)."""
    parsed = parse_accelerator_name(name)
    variants = FAMILIES.get(parsed.family)
    if not variants:
        return Resolution(slug=None, reason=UNKNOWN_GPU)
    detail = parse_accelerator_name(source_name) if source_name else None
    if detail is not None and detail.family != parsed.family:
        detail = None  # another part's name: not a hint for this one
    form = parsed.form or instance_form_factor(instance) or (detail.form if detail else None)
    memory_type = parsed.memory_type or (detail.memory_type if detail else None)
    found = parsed.memory_gb or (detail.memory_gb if detail else None)
    memory: tuple[Decimal, ...] | None = (found,) if found is not None else None
    if memory is None and memory_gb is not None:
        memory = memory_gb if isinstance(memory_gb, tuple) else (memory_gb,)
    if use_defaults:
        form = form or DEFAULT_FORM.get(parsed.family)
        if memory is None and parsed.family in DEFAULT_MEMORY_GB:
            memory = (DEFAULT_MEMORY_GB[parsed.family],)
    left = list(variants)
    if form is not None and len({v.form for v in left}) > 1:
        left = [v for v in left if v.form == form]
    if memory_type is not None and len({v.memory_type for v in left}) > 1:
        left = [v for v in left if v.memory_type == memory_type]
    if memory is not None:
        left = [v for v in left if _memory_matches(v, memory)]
    if len(left) == 1:
        return Resolution(slug=left[0].slug, known_family=True)
    if not left:
        said = ", ".join(
            x for x in (form, memory_type, _memory_words(memory) if memory else None) if x
        )
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
