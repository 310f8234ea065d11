// Fixture (layering_refuses_upward_room): a fact.
#pragma once
