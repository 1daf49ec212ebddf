# fusescan test fixture: transform registrations.
class TransformRegistry:
    @staticmethod
    def register(name):
        return lambda cls: cls


@TransformRegistry.register("fuse_add_rms_norm")
class FuseAddRMSNorm:
    pass


@TransformRegistry.register('fuse_gemms')
class FuseGemms:
    pass
