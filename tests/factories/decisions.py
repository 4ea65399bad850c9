from apps.core.roles import Role
from apps.decisions.services import decision_record_create


def make_record(*, brief, user, quote=None, route=None, roles=None, **fields):
    """A DRAFT record through the service (so its snapshot and audit trail are real)."""
    return decision_record_create(
        brief=brief,
        created_by=user,
        capacity_model=fields.pop("capacity_model", "RENT_ON_DEMAND"),
        chosen_quote=quote,
        chosen_api_route=route,
        required_roles=roles or [Role.PLATFORM, Role.FINANCE, Role.PROCUREMENT],
        **fields,
    )
